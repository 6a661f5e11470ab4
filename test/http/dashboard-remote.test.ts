// C7.2 / issue 14 item 3 from the dashboard: the owner's start button sends RemoteStartTransaction with the owner's id
// token to the charger, the stop button RemoteStopTransaction with the session's transaction id; the charger's answer
// comes back as the page's message. Another user's charger cannot be started from one's own session.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService({ listen: true });
});
afterAll(async () => {
  await svc.close();
});

async function signedIn(email: string): Promise<{ cookie: string; csrf: string }> {
  const first = await svc.app.inject({ method: 'GET', url: '/dashboard' });
  const pre = /ere_dash_csrf=([^;]+)/.exec(String(first.headers['set-cookie']))![1]!;
  const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
  const headers = (cookie: string) => ({ cookie, 'content-type': 'application/x-www-form-urlencoded' });
  await svc.app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: headers(`ere_dash_csrf=${pre}`), payload: form({ email, _csrf: pre }) });
  const mail = await svc.deps.db.selectFrom('outbox_messages').select('body').where('to_email', '=', email).executeTakeFirstOrThrow();
  const token = /\/dashboard\/sign-in\/([A-Za-z0-9_-]+)/.exec(mail.body)![1]!;
  const ok = await svc.app.inject({ method: 'POST', url: `/dashboard/sign-in/${token}`, headers: headers(`ere_dash_csrf=${pre}`), payload: form({ _csrf: pre }) });
  const cookie = `ere_dash=${/ere_dash=([^;]+)/.exec(String(ok.headers['set-cookie']))![1]!}`;
  const page = await svc.app.inject({ method: 'GET', url: '/dashboard', headers: { cookie } });
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page.body)![1]! };
}

/** The flash line of the page an action redirected to. */
async function flashAfter(res: { statusCode: number; headers: Record<string, unknown> }, cookie: string): Promise<string | undefined> {
  expect(res.statusCode).toBe(303);
  const page = await svc.app.inject({ method: 'GET', url: String(res.headers.location), headers: { cookie } });
  return /id="flash">([^<]*)</.exec(page.body)?.[1];
}

it('starts and stops charging on the owner\'s charger from the dashboard', { timeout: 30_000 }, async () => {
  const owner = await aUser(svc.deps, { email: `start-${Date.now()}@voorbeeld-laden.nl` });
  const stranger = await aUser(svc.deps, { email: `other-${Date.now()}@voorbeeld-laden.nl` });
  const ch = await anOcppCharger(svc, owner);
  const cli = await connectCharger(svc, ch, 'ocpp1.6');
  const seen: Array<{ action: string; params: unknown }> = [];
  let answer = 'Accepted';
  cli.handle('RemoteStartTransaction', async ({ params }) => {
    seen.push({ action: 'RemoteStartTransaction', params });
    return { status: answer };
  });
  cli.handle('RemoteStopTransaction', async ({ params }) => {
    seen.push({ action: 'RemoteStopTransaction', params });
    return { status: 'Accepted' };
  });
  try {
    const me = await signedIn(owner.email);
    const post = (url: string, who: { cookie: string; csrf: string }, extra: Record<string, string> = {}) =>
      svc.app.inject({ method: 'POST', url, headers: { cookie: who.cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ _csrf: who.csrf, ...extra }).toString() });

    // someone else's session cannot start it
    const other = await signedIn(stranger.email);
    const refused = await post(`/dashboard/chargers/${ch.chargerId}/start?locale=en`, other, { connector_id: '1' });
    expect(await flashAfter(refused, other.cookie)).toBe('That did not work: this charger is not yours.');
    expect(seen).toEqual([]);

    // two connectors reported: a start button for each
    for (const connectorId of [1, 2]) await cli.call('StatusNotification', { connectorId, errorCode: 'NoError', status: 'Available', timestamp: new Date().toISOString() });
    const two = await svc.app.inject({ method: 'GET', url: '/dashboard?locale=en', headers: { cookie: me.cookie } });
    expect(two.body.match(/name="connector_id" value="[12]"/g)).toEqual(['name="connector_id" value="1"', 'name="connector_id" value="2"']);
    expect(two.body).toContain('Start charging · Connector 2');

    // the charger's refusal is shown as its answer
    answer = 'Rejected';
    const rejected = await post(`/dashboard/chargers/${ch.chargerId}/start?locale=en`, me, { connector_id: '2' });
    // D240: in the page's words, not the OCPP word
    expect(await flashAfter(rejected, me.cookie)).toBe('The charger rejected the request.');
    expect(seen[0]).toEqual({ action: 'RemoteStartTransaction', params: { connectorId: 2, idTag: (seen[0]!.params as { idTag: string }).idTag } });
    seen.length = 0;
    answer = 'Accepted';

    const started = await post(`/dashboard/chargers/${ch.chargerId}/start?locale=en`, me, { connector_id: '1' });
    expect(started.statusCode).toBe(303);
    expect(await flashAfter(started, me.cookie)).toBe('The charger was asked to start charging.');
    expect(seen[0]!.action).toBe('RemoteStartTransaction');
    const idTag = (seen[0]!.params as { idTag: string; connectorId: number }).idTag;
    expect(seen[0]!.params).toEqual({ connectorId: 1, idTag });

    // the charger starts with that id tag; the page then offers to stop the running session
    const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag, meterStart: 500, timestamp: new Date().toISOString() })) as { transactionId: number };
    const session = await svc.deps.db.selectFrom('charging_sessions').select('id').where('charger_id', '=', ch.chargerId).executeTakeFirstOrThrow();
    const page = await svc.app.inject({ method: 'GET', url: '/dashboard', headers: { cookie: me.cookie } });
    expect(page.body).toContain(`/dashboard/sessions/${session.id}/stop`);
    // D240: on this two-connector charger the stop button says which connector it stops
    expect(page.body).toContain('<button type="submit" class="stop">Stop laden · Aansluiting 1</button>');
    const stopped = await post(`/dashboard/sessions/${session.id}/stop?locale=en`, me);
    expect(await flashAfter(stopped, me.cookie)).toBe('The charger was asked to stop charging.');
    expect(seen[1]).toEqual({ action: 'RemoteStopTransaction', params: { transactionId } });
    // without the session's CSRF token nothing is sent
    const forged = await svc.app.inject({ method: 'POST', url: `/dashboard/sessions/${session.id}/stop`, headers: { cookie: me.cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
    expect(forged.statusCode).toBe(403);
    expect(seen).toHaveLength(2);
  } finally {
    await cli.close();
  }
});
