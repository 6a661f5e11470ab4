// The e-mail findings of an outside audit (D168–D175): the unsubscribe page's own form and RFC 8058 one-click, a
// restart during delivery, retries over a real outage and requeue, which 5xx suppresses, unsubscribe against
// transactional mail, POST /admin/suppressions for a listed address, no live link through the API, and GET
// /admin/outbox's fields and status filter. Against a local SMTP server started here. (SMTP_FROM and the CSV header:
// test/http/mail-audit-inputs.test.ts.)
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { startSmtpSink, type ReceivedMail, type SmtpSink } from '../helpers/smtp-sink.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { testClock, type TestClock } from '../helpers/clock.ts';
import { aPartner, type TestPartner } from '../helpers/factories.ts';
import { adminHeaders, postCustomers } from '../helpers/partner-factories.ts';
import { createMailer, deliverOutbox, MAX_ATTEMPTS, SMTP_TIMEOUTS } from '../../src/domain/invites/index.ts';
import { requestSignInLink, SIGN_IN_LINK_MINUTES } from '../../src/domain/dashboard/sign-in.ts';
import { SIGN_IN_MAIL_MINUTES } from '../../src/domain/invites/deliver.ts';
import { askExistingUserToConfirm } from '../../src/domain/partners/claim-existing-user.ts';
import { queueMessages } from '../../src/domain/invites/outbox.ts';
import { operatorOf } from '../../src/lib/operator.ts';
import { loadConfig } from '../../src/config.ts';

let sink: SmtpSink;
let smtpPort = 0;
let received: ReceivedMail[] = [];
/** address → the RCPT answer [code, text] it gets every time */
const rcptAnswers = new Map<string, [number, string]>();
/** how long the server takes to answer the end of DATA */
let dataDelayMs = 0;
/** called when the server has the whole message, before it answers */
let onMessage: ((to: string) => void | Promise<void>) | null = null;
let svc: TestService;
let clock: TestClock;
let partner: TestPartner;

beforeAll(async () => {
  sink = await startSmtpSink({
    rcpt: (address) => rcptAnswers.get(address),
    beforeAnswer: async (mail) => {
      await onMessage?.(mail.to[0]!);
      if (dataDelayMs) await new Promise((r) => setTimeout(r, dataDelayMs));
    },
  });
  received = sink.received;
  smtpPort = sink.port;
  clock = testClock('2026-11-22T10:00:00Z');
  svc = await createTestService({ clock, env: { SMTP_URL: `smtp://127.0.0.1:${smtpPort}`, SMTP_FROM: 'ERE Gateway <invites@ere-gateway.nl>' } });
  partner = await aPartner(svc.deps, { name: 'Groen Laden' });
});
afterAll(async () => {
  await svc?.close();
  await sink.close();
});
beforeEach(() => {
  dataDelayMs = 0;
  onMessage = null;
});

const unfold = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/\r?\n[ \t]+/g, ' ');
const rowsTo = (email: string) => svc.deps.db.selectFrom('outbox_messages').selectAll().where('to_email', '=', email).orderBy('created_at').execute();
const rowTo = async (email: string) => (await rowsTo(email))[0]!;
const invite = async (email: string, name = 'Klant') => {
  const res = await postCustomers(svc, partner.apiKey, { consent: true, customers: [{ name, email }] });
  expect(res.statusCode).toBe(200);
  return res.json().created[0].claim_url as string;
};
const deliver = () => deliverOutbox(svc.deps);
const receivedBy = (email: string) => received.filter((r) => r.to.includes(email));
const aUser = async (email: string) => {
  const res = await svc.app.inject({ method: 'POST', url: '/admin/users', headers: adminHeaders, payload: { email } });
  expect(res.statusCode).toBe(201);
  return res.json().user_id as string;
};

describe('D168: the unsubscribe page answers the browser and the mail client', () => {
  it('the page\'s own form (form type, empty body) and RFC 8058 one-click both unsubscribe; invites carry List-Unsubscribe-Post', async () => {
    await invite('knop@klant.nl');
    await invite('klik@klant.nl');
    await deliver();
    const raw = unfold(receivedBy('knop@klant.nl')[0]!.raw);
    expect(raw).toMatch(/List-Unsubscribe: <http:\/\/localhost:0\/unsubscribe\/[A-Za-z0-9_-]+>/);
    expect(raw).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click');

    const link = (email: string) => {
      const m = /List-Unsubscribe: <http:\/\/localhost:0(\/unsubscribe\/[A-Za-z0-9_-]+)>/.exec(unfold(receivedBy(email)[0]!.raw))!;
      return m[1]!;
    };
    // what a browser sends for <form method="post"> without fields
    const button = await svc.app.inject({
      method: 'POST',
      url: `${link('knop@klant.nl')}?locale=nl`,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': '0' },
      payload: '',
    });
    expect(button.statusCode).toBe(200);
    expect(button.headers['content-type']).toMatch(/text\/html/);
    expect(button.body).toContain('afgemeld');
    // what a mail client sends for one-click (RFC 8058 §3.2)
    const oneClick = await svc.app.inject({
      method: 'POST',
      url: link('klik@klant.nl'),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'List-Unsubscribe=One-Click',
    });
    expect(oneClick.statusCode).toBe(200);
    const sup = await svc.deps.db.selectFrom('email_suppressions').select(['email_lower', 'reason', 'source']).where('email_lower', 'in', ['knop@klant.nl', 'klik@klant.nl']).orderBy('email_lower').execute();
    expect(sup).toEqual([
      { email_lower: 'klik@klant.nl', reason: 'unsubscribe', source: 'link' },
      { email_lower: 'knop@klant.nl', reason: 'unsubscribe', source: 'link' },
    ]);
  });
});

describe('D169: a stopping service ends delivery between messages and never sends a message twice', () => {
  it('the message in flight finishes, no next one is taken; the message is `sending` while the server has it', async () => {
    for (const n of [1, 2, 3]) await invite(`stop${n}@klant.nl`);
    const seen: string[] = [];
    onMessage = async (to) => {
      onMessage = null;
      seen.push((await rowTo(to)).status);
      svc.deps.startup.stopping = true; // the service begins to stop while the first message is with the server
    };
    try {
      const run = await deliver();
      expect(run).toMatchObject({ due: 3, sent: 1, stopped: true });
    } finally {
      svc.deps.startup.stopping = false;
    }
    expect(seen).toEqual(['sending']);
    const statuses = await Promise.all([1, 2, 3].map(async (n) => (await rowTo(`stop${n}@klant.nl`)).status));
    expect(statuses.sort()).toEqual(['queued', 'queued', 'sent']);
    expect(received.filter((r) => r.to[0]!.startsWith('stop'))).toHaveLength(1);
    await deliver(); // the next run takes the rest
    expect(received.filter((r) => r.to[0]!.startsWith('stop'))).toHaveLength(3);
  });

  it('a message left `sending` by a process that died mid-send fails as interrupted and is not sent again', async () => {
    await invite('crash@klant.nl');
    const row = await rowTo('crash@klant.nl');
    // what a process killed after the server took the message leaves behind
    await svc.deps.db.updateTable('outbox_messages').set({ status: 'sending', attempts: 1, next_attempt_at: clock() }).where('id', '=', row.id).execute();
    expect(await deliver()).toMatchObject({ interrupted: 0, sent: 0 }); // a send may still be under way
    clock.advance(11 * 60_000);
    expect(await deliver()).toMatchObject({ interrupted: 1, sent: 0 });
    const after = await rowTo('crash@klant.nl');
    expect(after).toMatchObject({ status: 'failed', attempts: 1 });
    expect(after.last_error).toMatch(/interrupted/);
    expect(receivedBy('crash@klant.nl')).toHaveLength(0);
    await deliver();
    expect(receivedBy('crash@klant.nl')).toHaveLength(0);
  });

  it('stop() waits for a delivery run started through POST /admin/jobs/:job/run and closes the database after it', { timeout: 30_000 }, async () => {
    const db: TestDb = await createTestDb();
    const own = await createTestService({ db, listen: true, env: { SMTP_URL: `smtp://127.0.0.1:${smtpPort}` } });
    try {
      const p = await aPartner(own.deps);
      await postCustomers(own, p.apiKey, { consent: true, customers: [1, 2, 3].map((n) => ({ name: 'S', email: `slow${n}@klant.nl` })) });
      dataDelayMs = 700;
      let firstArrived!: () => void;
      const arrived = new Promise<void>((r) => (firstArrived = r));
      onMessage = () => {
        onMessage = null;
        firstArrived();
      };
      const running = fetch(`${own.url}/admin/jobs/outbox-deliver/run`, { method: 'POST', headers: adminHeaders });
      await arrived;
      await own.stop();
      const res = await running;
      expect(res.status).toBe(200);
      expect(((await res.json()) as { result: unknown }).result).toMatchObject({ sent: 1, stopped: true });
      await new Promise((r) => setTimeout(r, 1_500)); // nothing more goes out after the stop
      expect(received.filter((r) => r.to[0]!.startsWith('slow'))).toHaveLength(1);
      const rows = await db.db.selectFrom('outbox_messages').select(['to_email', 'status']).where('to_email', 'like', 'slow%').orderBy('to_email').execute();
      expect(rows.map((r) => r.status).sort()).toEqual(['queued', 'queued', 'sent']);
    } finally {
      await own.stop();
      await db.close();
    }
  });

  it('a server that never greets holds a message seconds, not minutes (bounded SMTP timeouts)', { timeout: 30_000 }, async () => {
    const silent = net.createServer(() => undefined); // accepts and says nothing
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const port = (silent.address() as AddressInfo).port;
    // the service's bounds (seconds, where nodemailer waits minutes), and that the mailer applies its bounds: here
    // shortened, so the suite does not wait the ten seconds of the real greeting bound
    expect(SMTP_TIMEOUTS).toMatchObject({ connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 });
    const mailer = createMailer(loadConfig({ SMTP_URL: `smtp://127.0.0.1:${port}` }), { greetingTimeout: 300 })!;
    const started = Date.now();
    try {
      const err = await mailer.send({ to: 'x@klant.nl', subject: 's', text: 't' }).then(() => null, (e: unknown) => e as { code?: string });
      expect(err?.code).toBe('ETIMEDOUT');
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      mailer.close();
      silent.close();
    }
  });
});

describe('D170: retries over an outage, requeue, and which refusal suppresses', () => {
  it('retries with backoff capped at an hour for two days, then fails; requeue sends it again', async () => {
    rcptAnswers.set('storing@klant.nl', [451, '4.4.1 relay unavailable, try later']);
    await invite('storing@klant.nl');
    const first = clock().getTime();
    const gaps: number[] = [];
    let row = await rowTo('storing@klant.nl');
    for (let i = 0; i < 200 && row.status === 'queued'; i++) {
      clock.set(row.next_attempt_at);
      const before = clock().getTime();
      await deliver();
      row = await rowTo('storing@klant.nl');
      if (row.status === 'queued') gaps.push(row.next_attempt_at.getTime() - before);
    }
    const min = 60_000;
    expect(gaps.slice(0, 8)).toEqual([1, 2, 4, 8, 16, 32, 60, 60].map((m) => m * min));
    expect(Math.max(...gaps)).toBe(60 * min);
    expect(row.status).toBe('failed');
    expect(row.attempts).toBe(MAX_ATTEMPTS);
    const span = clock().getTime() - first;
    expect(span).toBeGreaterThanOrEqual(48 * 60 * min);
    expect(span).toBeLessThan(50 * 60 * min);
    expect(row.last_error).toMatch(/451/);

    // the outage is over: the operator queues it again
    rcptAnswers.delete('storing@klant.nl');
    const requeue = (id: string) => svc.app.inject({ method: 'POST', url: `/admin/outbox/${id}/requeue`, headers: adminHeaders });
    const again = await requeue(row.id);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ id: row.id, status: 'queued', next_attempt_at: clock().toISOString().replace('.000Z', 'Z') });
    expect(await deliver()).toMatchObject({ sent: 1 });
    expect(receivedBy('storing@klant.nl')).toHaveLength(1);
    const sent = await requeue(row.id);
    expect([sent.statusCode, sent.json().error]).toEqual([409, 'outbox_message_not_failed']);
    const unknown = await requeue('00000000-0000-4000-8000-000000000000');
    expect([unknown.statusCode, unknown.json().error]).toEqual([404, 'outbox_message_not_found']);
    expect((await requeue('not-a-uuid')).statusCode).toBe(404);
  });

  it('a relay or policy refusal fails the message without suppressing; a 5.1.x or plain 550 of the recipient suppresses', async () => {
    rcptAnswers.set('relay@klant.nl', [550, '5.7.1 relaying denied']);
    rcptAnswers.set('policy@klant.nl', [554, '5.7.1 rejected by policy']);
    rcptAnswers.set('nouser@klant.nl', [550, '5.1.1 No such user here']);
    rcptAnswers.set('gone@klant.nl', [553, 'mailbox name not allowed']);
    for (const e of ['relay', 'policy', 'nouser', 'gone']) await invite(`${e}@klant.nl`);
    await deliver();
    for (const e of ['relay', 'policy', 'nouser', 'gone']) expect((await rowTo(`${e}@klant.nl`)).status).toBe('failed');
    expect((await rowTo('relay@klant.nl')).last_error).toMatch(/550 .*relaying denied/);
    const sup = await svc.deps.db.selectFrom('email_suppressions').select(['email_lower', 'reason', 'source']).where('email_lower', 'in', ['relay@klant.nl', 'policy@klant.nl', 'nouser@klant.nl', 'gone@klant.nl']).orderBy('email_lower').execute();
    expect(sup).toEqual([
      { email_lower: 'gone@klant.nl', reason: 'bounce', source: 'delivery' },
      { email_lower: 'nouser@klant.nl', reason: 'bounce', source: 'delivery' },
    ]);
    for (const e of ['relay', 'policy', 'nouser', 'gone']) rcptAnswers.delete(`${e}@klant.nl`);
  });
});

describe('D171: an unsubscribe stops invites, not the mail the user asked for', () => {
  it('sign-in links and claim confirmations still reach an unsubscribed address, without List-Unsubscribe; not a bounced one', async () => {
    await invite('weg@klant.nl');
    await deliver();
    const link = /\/unsubscribe\/[A-Za-z0-9_-]+/.exec(unfold(receivedBy('weg@klant.nl')[0]!.raw))![0];
    const unsub = await svc.app.inject({ method: 'POST', url: link });
    expect([unsub.statusCode, unsub.body.slice(0, 300)]).toEqual([200, expect.any(String)]);

    await aUser('weg@klant.nl');
    expect(SIGN_IN_MAIL_MINUTES).toBe(SIGN_IN_LINK_MINUTES); // a sign-in mail is not sent after its link expired
    expect(await requestSignInLink(svc.deps, 'weg@klant.nl', 'nl')).toContain('/dashboard/sign-in/');
    await askExistingUserToConfirm(svc.deps, { id: (await rowTo('weg@klant.nl')).draft_id!, email: 'weg@klant.nl', partner_name: 'Groen Laden' }, 'u', 'claimtoken123', 'nl');
    // and a new invite would not go
    await queueMessages(svc.deps.db, clock(), [{ to: 'weg@klant.nl', subject: 'invite', body: 'b', unsubscribeToken: 'weg-invite-token-0001' }], operatorOf(svc.deps.config));
    const run = await deliver();
    expect(run).toMatchObject({ sent: 2, suppressed: 1 });
    const got = receivedBy('weg@klant.nl').slice(1).map((r) => unfold(r.raw));
    expect(got).toHaveLength(2);
    // the two were queued in the same instant: their order on the wire is not theirs to keep
    expect(got.filter((raw) => raw.includes('/dashboard/sign-in/'))).toHaveLength(1);
    expect(got.filter((raw) => raw.includes('confirm='))).toHaveLength(1);
    for (const raw of got) expect(raw).not.toMatch(/List-Unsubscribe/);
    const kinds = (await rowsTo('weg@klant.nl')).map((r) => [r.kind, r.status]);
    expect(kinds).toEqual(expect.arrayContaining([['dashboard_sign_in', 'sent'], ['claim_link_confirm', 'sent'], ['claim_invite', 'suppressed']]));

    // a bounced address gets nothing, not even a sign-in link
    await aUser('stuk@klant.nl');
    await svc.app.inject({ method: 'POST', url: '/admin/suppressions', headers: adminHeaders, payload: { email: 'stuk@klant.nl', reason: 'bounce' } });
    await requestSignInLink(svc.deps, 'stuk@klant.nl', 'nl');
    await deliver();
    expect(receivedBy('stuk@klant.nl')).toHaveLength(0);
    expect((await rowTo('stuk@klant.nl')).status).toBe('suppressed');
  });

  it('an unsubscribe the operator entered can be taken off; one made through the link cannot, and the 409 says which', async () => {
    const add = await svc.app.inject({ method: 'POST', url: '/admin/suppressions', headers: adminHeaders, payload: { email: 'opgegeven@klant.nl', reason: 'unsubscribe' } });
    expect(add.statusCode).toBe(201);
    const del = (email: string) => svc.app.inject({ method: 'DELETE', url: `/admin/suppressions/${encodeURIComponent(email)}`, headers: adminHeaders });
    const removed = await del('opgegeven@klant.nl');
    expect([removed.statusCode, removed.json()]).toEqual([200, { email: 'opgegeven@klant.nl', removed: true }]);
    const own = await del('weg@klant.nl'); // unsubscribed through the link above
    expect([own.statusCode, own.json().error]).toEqual([409, 'suppression_unsubscribed']);
    expect(own.json().detail).toMatch(/through the link/);
    // an entry from before the list kept who made it: refused, without claiming the owner made it
    await svc.deps.db.insertInto('email_suppressions').values({ email_lower: 'oud@klant.nl', reason: 'unsubscribe', detail: null, source: null }).execute();
    const old = await del('oud@klant.nl');
    expect([old.statusCode, old.json().error]).toEqual([409, 'suppression_unsubscribed']);
    expect(old.json().detail).not.toMatch(/unsubscribed itself|through the link/);
    const list = (await svc.app.inject({ method: 'GET', url: '/admin/suppressions?email=weg@klant.nl', headers: adminHeaders })).json();
    expect(list.suppressions[0]).toMatchObject({ email: 'weg@klant.nl', reason: 'unsubscribe', source: 'link' });
  });
});

describe('D172: no live link through the API, none kept once it is of no use', () => {
  it('GET /admin/outbox shows links without their secret; the stored body loses it once sent; the server got the real link', async () => {
    const claimUrl = await invite('geheim@klant.nl');
    const token = claimUrl.slice(claimUrl.lastIndexOf('/') + 1);
    const list = async () => (await svc.app.inject({ method: 'GET', url: '/admin/outbox?to=geheim@klant.nl', headers: adminHeaders })).json().messages[0];
    const queued = await list();
    expect(queued.body).not.toContain(token);
    expect(queued.body).toContain('/claim/…');
    expect(queued.body).toMatch(/\/unsubscribe\/…/);
    expect((await rowTo('geheim@klant.nl')).body).toContain(token); // delivery needs it
    await deliver();
    expect(unfold(receivedBy('geheim@klant.nl')[0]!.raw)).toContain(claimUrl);
    const stored = await rowTo('geheim@klant.nl');
    expect(stored.body).not.toContain(token);
    expect(stored.body).not.toMatch(/\/unsubscribe\/[A-Za-z0-9_-]{10,}/);
    expect(stored.links_erased_at).not.toBeNull();

    // sign-in links and confirmation codes too
    await aUser('login@klant.nl');
    const signIn = (await requestSignInLink(svc.deps, 'login@klant.nl', 'en'))!;
    const signInToken = /sign-in\/([^?]+)/.exec(signIn)![1]!;
    const shown = (await svc.app.inject({ method: 'GET', url: '/admin/outbox?to=login@klant.nl', headers: adminHeaders })).json().messages[0];
    expect(shown.body).not.toContain(signInToken);
    expect(shown.body).toContain('/dashboard/sign-in/…?locale=en');
  });

  it('a failed message keeps its links a week for a requeue, then loses them and cannot be requeued', async () => {
    rcptAnswers.set('later-weg@klant.nl', [554, '5.7.1 rejected']);
    const claimUrl = await invite('later-weg@klant.nl');
    await deliver();
    rcptAnswers.delete('later-weg@klant.nl');
    let row = await rowTo('later-weg@klant.nl');
    expect(row.status).toBe('failed');
    expect(row.body).toContain(claimUrl);
    clock.advance(8 * 24 * 3_600_000);
    await deliver();
    row = await rowTo('later-weg@klant.nl');
    expect(row.body).not.toContain(claimUrl.slice(claimUrl.lastIndexOf('/') + 1));
    const res = await svc.app.inject({ method: 'POST', url: `/admin/outbox/${row.id}/requeue`, headers: adminHeaders });
    expect([res.statusCode, res.json().error]).toEqual([409, 'outbox_message_not_failed']);
  });
});

describe('D173: the operator\'s answers about the outbox and the suppression list', () => {
  it('GET /admin/outbox gives id, kind, status, attempts, last_error and the next attempt, and filters by status', async () => {
    rcptAnswers.set('filter@klant.nl', [451, '4.2.1 busy']);
    await invite('filter@klant.nl');
    await deliver();
    rcptAnswers.delete('filter@klant.nl');
    const res = await svc.app.inject({ method: 'GET', url: '/admin/outbox?status=queued&to=filter@klant.nl', headers: adminHeaders });
    expect(res.statusCode).toBe(200);
    const [m] = res.json().messages;
    const row = await rowTo('filter@klant.nl');
    expect(m).toMatchObject({ id: row.id, kind: 'claim_invite', status: 'queued', attempts: 1, last_error: expect.stringContaining('451'), next_attempt_at: row.next_attempt_at.toISOString().replace('.000Z', 'Z'), failed_at: null });
    const sentOnly = (await svc.app.inject({ method: 'GET', url: '/admin/outbox?status=sent&limit=1000', headers: adminHeaders })).json();
    expect(sentOnly.messages.length).toBeGreaterThan(0);
    expect(sentOnly.messages.every((x: { status: string; next_attempt_at: string | null }) => x.status === 'sent' && x.next_attempt_at === null)).toBe(true);
    expect((await svc.app.inject({ method: 'GET', url: '/admin/outbox?status=lost', headers: adminHeaders })).statusCode).toBe(400);
  });

  it('POST /admin/suppressions: 201 when added; 200 with the stored entry (its own reason) when already listed', async () => {
    const post = (reason: string) => svc.app.inject({ method: 'POST', url: '/admin/suppressions', headers: adminHeaders, payload: { email: 'Twee@klant.nl', reason } });
    const first = await post('bounce');
    expect([first.statusCode, first.json()]).toEqual([201, { ok: true, email: 'twee@klant.nl', reason: 'bounce', created: true }]);
    const again = await post('manual');
    expect([again.statusCode, again.json()]).toEqual([200, { ok: true, email: 'twee@klant.nl', reason: 'bounce', created: false }]);
  });
});
