// C7.2 the dashboard's live part over real HTTP: GET /dashboard/stream, opened with the session cookie, is the
// Personal API's stream of the user's own chargers (another user's charger never appears), refused without a session,
// and ended once the session is signed out (announced to every process at once; the keep-alive tick, every second
// here, is the fallback).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService({ listen: true, env: { STREAM_KEEPALIVE_SECONDS: '1' } });
});
afterAll(async () => {
  await svc.close();
});

const form = (o: Record<string, string>) => new URLSearchParams(o).toString();
const formHeaders = (cookie: string) => ({ cookie, 'content-type': 'application/x-www-form-urlencoded' });

async function signedIn(email: string): Promise<{ cookie: string; csrf: string }> {
  const first = await svc.app.inject({ method: 'GET', url: '/dashboard' });
  const pre = /ere_dash_csrf=([^;]+)/.exec(String(first.headers['set-cookie']))![1]!;
  await svc.app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: formHeaders(`ere_dash_csrf=${pre}`), payload: form({ email, _csrf: pre }) });
  const mail = await svc.deps.db.selectFrom('outbox_messages').select('body').where('to_email', '=', email).executeTakeFirstOrThrow();
  const token = /\/dashboard\/sign-in\/([A-Za-z0-9_-]+)/.exec(mail.body)![1]!;
  const ok = await svc.app.inject({ method: 'POST', url: `/dashboard/sign-in/${token}`, headers: formHeaders(`ere_dash_csrf=${pre}`), payload: form({ _csrf: pre }) });
  const cookie = `ere_dash=${/ere_dash=([^;]+)/.exec(String(ok.headers['set-cookie']))![1]!}`;
  const page = await svc.app.inject({ method: 'GET', url: '/dashboard', headers: { cookie } });
  return { cookie, csrf: /name="_csrf" value="([^"]+)"/.exec(page.body)![1]! };
}

/** Reads the stream until `until` holds for what arrived, or it ends; gives what arrived and whether it ended. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, until: (text: string) => boolean, ms: number, sofar = '') {
  const dec = new TextDecoder();
  let text = sofar;
  const deadline = Date.now() + ms;
  while (!until(text) && Date.now() < deadline) {
    const next = await Promise.race([reader.read(), new Promise<'late'>((r) => setTimeout(() => r('late'), deadline - Date.now()))]);
    if (next === 'late') break;
    if (next.done) return { text, ended: true };
    text += dec.decode(next.value, { stream: true });
  }
  return { text, ended: false };
}

it('streams only the user\'s own chargers and ends when the session is signed out', { timeout: 30_000 }, async () => {
  const owner = await aUser(svc.deps, { email: `stream-${Date.now()}@voorbeeld-laden.nl` });
  const other = await aUser(svc.deps, { email: `ander-${Date.now()}@voorbeeld-laden.nl` });
  const mine = await anOcppCharger(svc, owner, { nickname: 'Mijn paal' });
  const theirs = await anOcppCharger(svc, other, { nickname: 'Andermans paal' });
  expect((await fetch(`${svc.url}/dashboard/stream`)).status).toBe(401);

  const me = await signedIn(owner.email);
  const ac = new AbortController();
  const res = await fetch(`${svc.url}/dashboard/stream`, { headers: { cookie: me.cookie, accept: 'text/event-stream' }, signal: ac.signal });
  try {
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    const first = await readUntil(reader, (t) => t.includes(': keep-alive'), 10_000);
    expect(first.text).toContain('event: charger');
    expect(first.text).toContain(mine.chargerId);
    expect(first.text).not.toContain(theirs.chargerId);
    expect(first.text).not.toContain('Andermans paal');

    const out = await svc.app.inject({ method: 'POST', url: '/dashboard/sign-out', headers: formHeaders(me.cookie), payload: form({ _csrf: me.csrf }) });
    expect(out.statusCode).toBe(303);
    const after = await readUntil(reader, () => false, 5_000);
    expect(after.ended).toBe(true);
    // the cookie no longer opens a stream
    expect((await fetch(`${svc.url}/dashboard/stream`, { headers: { cookie: me.cookie } })).status).toBe(401);
  } finally {
    ac.abort();
  }
});
