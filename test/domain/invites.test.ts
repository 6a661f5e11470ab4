// C3.5 invites: the outbox, SMTP delivery (against a local SMTP server started here), retries with backoff,
// hard bounces and unsubscribes on the suppression list, GET /admin/outbox (C1.6), referral codes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { startSmtpSink, type ReceivedMail, type SmtpSink } from '../helpers/smtp-sink.ts';
import { testClock, type TestClock } from '../helpers/clock.ts';
import { aPartner, type TestPartner } from '../helpers/factories.ts';
import { adminHeaders, postCustomers, postImport } from '../helpers/partner-factories.ts';
import { deliverOutbox, MAX_ATTEMPTS } from '../../src/domain/invites/index.ts';
import { findJob } from '../../src/jobs/registry.ts';

let sink: SmtpSink;
let received: ReceivedMail[] = [];
const tempFailures = new Map<string, number>(); // address → remaining 451 answers
let svc: TestService;
let clock: TestClock;
let partner: TestPartner;

beforeAll(async () => {
  sink = await startSmtpSink({
    rcpt(address) {
      if (address.startsWith('bounce')) return [550, '5.1.1 No such user here'];
      const left = tempFailures.get(address) ?? 0;
      if (left === 0) return undefined;
      tempFailures.set(address, left - 1);
      return [451, '4.2.1 Mailbox busy, try later'];
    },
  });
  received = sink.received;
  clock = testClock('2026-11-22T10:00:00Z');
  svc = await createTestService({ clock, env: { SMTP_URL: sink.url, SMTP_FROM: 'ERE Gateway <invites@ere-gateway.nl>' } });
  partner = await aPartner(svc.deps, { name: 'Groen Laden' });
});
afterAll(async () => {
  await svc?.close();
  await sink.close();
});

const outboxRows = () => svc.deps.db.selectFrom('outbox_messages').selectAll().orderBy('to_email').execute();
const job = () => findJob('outbox-deliver')!;
const unfold = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/\r?\n[ \t]+/g, ' ');

describe('invites by SMTP', () => {
  it('queues one invite per draft, delivers by SMTP, retries a temporary failure, suppresses a hard bounce', async () => {
    tempFailures.set('later@klant.nl', 1);
    const res = await postCustomers(svc, partner.apiKey, {
      consent: true,
      customers: [
        { name: 'Olga', email: 'olga@klant.nl' },
        { name: 'Bounce', email: 'bounce@klant.nl' },
        { name: 'Later', email: 'later@klant.nl' },
      ],
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.claim_urls).toEqual([]); // send_invite defaults to true: the links go by e-mail
    const olgaUrl = body.created[0].claim_url as string;

    const outbox = await svc.app.inject({ method: 'GET', url: '/admin/outbox', headers: adminHeaders });
    expect(outbox.statusCode).toBe(200);
    const messages = outbox.json().messages;
    expect(messages).toHaveLength(3);
    const olga = messages.find((m: { to: string }) => m.to === 'olga@klant.nl');
    expect(olga).toMatchObject({ subject: expect.stringContaining('Groen Laden'), created_at: '2026-11-22T10:00:00Z', status: 'queued' });
    // D172: the operator sees the link without its secret
    expect(olga.body).not.toContain(olgaUrl);
    expect(olga.body).toContain('/claim/…');
    expect(olga.body).toContain('Beste Olga');

    const run = await job().run(svc.deps);
    expect(run).toEqual({ smtp: true, due: 3, sent: 1, retried: 1, failed: 1, suppressed: 0, interrupted: 0, stopped: false });
    expect(received).toHaveLength(1);
    expect(received[0]!.to).toEqual(['olga@klant.nl']);
    expect(received[0]!.from).toBe('invites@ere-gateway.nl');
    const raw = unfold(received[0]!.raw);
    expect(raw).toContain(olgaUrl);
    expect(raw).toMatch(/List-Unsubscribe: <http:\/\/localhost:0\/unsubscribe\/[A-Za-z0-9_-]+>/);

    let rows = await outboxRows();
    expect(rows.map((r) => [r.to_email, r.status, r.attempts])).toEqual([
      ['bounce@klant.nl', 'failed', 1],
      ['later@klant.nl', 'queued', 1],
      ['olga@klant.nl', 'sent', 1],
    ]);
    const later = rows.find((r) => r.to_email === 'later@klant.nl')!;
    expect(later.next_attempt_at.toISOString()).toBe('2026-11-22T10:01:00.000Z');
    expect(later.last_error).toMatch(/451/);
    const sup = await svc.deps.db.selectFrom('email_suppressions').selectAll().execute();
    expect(sup.map((s) => [s.email_lower, s.reason])).toEqual([['bounce@klant.nl', 'bounce']]);

    // not due yet; then after the backoff it goes out
    expect(await job().run(svc.deps)).toMatchObject({ due: 0, sent: 0 });
    clock.advance(61_000);
    expect(await job().run(svc.deps)).toMatchObject({ due: 1, sent: 1 });
    rows = await outboxRows();
    expect(rows.find((r) => r.to_email === 'later@klant.nl')).toMatchObject({ status: 'sent', attempts: 2 });
    expect(received.map((r) => r.to[0])).toEqual(['olga@klant.nl', 'later@klant.nl']);

    // a bounced address is skipped as suppressed on the next upload (any partner)
    const other = await aPartner(svc.deps);
    const again = (await postCustomers(svc, other.apiKey, { consent: true, customers: [{ name: 'B', email: 'Bounce@klant.nl' }] })).json();
    expect(again.rejected).toEqual([{ email: 'Bounce@klant.nl', reason: 'suppressed', row: 1 }]);
    expect(again.skipped.suppressed).toBe(1);
  });

  it('gives up after the last attempt with exponential backoff', async () => {
    tempFailures.set('busy@klant.nl', 100);
    await postCustomers(svc, partner.apiKey, { consent: true, customers: [{ name: 'Busy', email: 'busy@klant.nl' }] });
    const gaps: number[] = [];
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      const before = clock().getTime();
      await job().run(svc.deps);
      const row = await svc.deps.db.selectFrom('outbox_messages').selectAll().where('to_email', '=', 'busy@klant.nl').executeTakeFirstOrThrow();
      expect(row.attempts).toBe(i + 1);
      if (row.status === 'queued') {
        gaps.push(row.next_attempt_at.getTime() - before);
        clock.set(row.next_attempt_at);
      } else {
        expect(row.status).toBe('failed');
      }
    }
    // D170: 1, 2, 4, … minutes, at most an hour, for two days
    expect(gaps.slice(0, 8)).toEqual([1, 2, 4, 8, 16, 32, 60, 60].map((m) => m * 60_000));
    expect(gaps).toHaveLength(MAX_ATTEMPTS - 1);
    const row = await svc.deps.db.selectFrom('outbox_messages').selectAll().where('to_email', '=', 'busy@klant.nl').executeTakeFirstOrThrow();
    expect(row.status).toBe('failed');
    expect(received.some((r) => r.to.includes('busy@klant.nl'))).toBe(false);
  });

  it('unsubscribes through the link in the e-mail; later uploads skip the address and nothing more is sent', async () => {
    // the link as the e-mail carried it (D172: the stored body no longer holds it once sent)
    const raw = unfold(received.find((r) => r.to.includes('olga@klant.nl'))!.raw);
    const link = /\/unsubscribe\/([A-Za-z0-9_-]+)/.exec(raw)![0];
    const page = await svc.app.inject({ method: 'GET', url: link });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('olga@klant.nl');
    const done = await svc.app.inject({ method: 'POST', url: link });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('afgemeld');
    const sup = await svc.deps.db.selectFrom('email_suppressions').selectAll().where('email_lower', '=', 'olga@klant.nl').executeTakeFirstOrThrow();
    expect(sup.reason).toBe('unsubscribe');
    expect((await svc.app.inject({ method: 'GET', url: '/unsubscribe/unknown-token-123' })).statusCode).toBe(404);

    const other = await aPartner(svc.deps);
    const res = (await postImport(svc, other.apiKey, { consent: true, rows: [{ name: 'Olga', email: 'olga@klant.nl' }] })).json();
    expect(res.rejected).toEqual([{ email: 'olga@klant.nl', reason: 'suppressed', row: 1 }]);
  });

  it('admin suppressions stop queued mail; without SMTP nothing is sent and mail stays in the outbox', async () => {
    await postCustomers(svc, partner.apiKey, { consent: true, customers: [{ name: 'Piet', email: 'piet@klant.nl' }, { name: 'Kees', email: 'kees@klant.nl' }] });
    // without a mailer (SMTP_URL unset) the job sends nothing and the messages stay queued
    expect(await deliverOutbox({ ...svc.deps, mailer: null })).toEqual({ smtp: false, due: 0, sent: 0, retried: 0, failed: 0, suppressed: 0, interrupted: 0, stopped: false });
    const add = await svc.app.inject({ method: 'POST', url: '/admin/suppressions', headers: adminHeaders, payload: { email: 'Piet@klant.nl' } });
    expect(add.statusCode).toBe(201);
    expect(add.json()).toEqual({ ok: true, email: 'piet@klant.nl', reason: 'manual', created: true });
    const bad = await svc.app.inject({ method: 'POST', url: '/admin/suppressions', headers: adminHeaders, payload: { email: 'nope' } });
    expect(bad.statusCode).toBe(400);
    const sentBefore = received.length;
    const run = await job().run(svc.deps);
    expect(run).toMatchObject({ sent: 1 });
    expect(received.slice(sentBefore).map((r) => r.to[0])).toEqual(['kees@klant.nl']);
    const piet = await svc.deps.db.selectFrom('outbox_messages').selectAll().where('to_email', '=', 'piet@klant.nl').executeTakeFirstOrThrow();
    expect(piet.status).toBe('suppressed');
    // its links were erased at the service's time (the database's, D250), not the machine's
    expect(new Date(piet.links_erased_at!).toISOString()).toBe(clock().toISOString());
    const filtered = await svc.app.inject({ method: 'GET', url: '/admin/outbox?to=PIET@klant.nl', headers: adminHeaders });
    expect(filtered.json().messages.map((m: { to: string; status: string }) => [m.to, m.status])).toEqual([['piet@klant.nl', 'suppressed']]);
  });

  it('lists the suppression list and takes a manual or bounce entry off it, not an unsubscribe its owner made (D145, D171)', async () => {
    const add = (email: string, reason: string) => svc.app.inject({ method: 'POST', url: '/admin/suppressions', headers: adminHeaders, payload: { email, reason } });
    await add('typo@klant.nl', 'manual');
    await add('gone@klant.nl', 'unsubscribe');
    const list = await svc.app.inject({ method: 'GET', url: '/admin/suppressions?email=klant.nl&limit=100', headers: adminHeaders });
    expect(list.statusCode).toBe(200);
    const emails = (list.json().suppressions as Array<{ email: string; reason: string }>).map((x) => [x.email, x.reason]);
    expect(emails).toEqual(expect.arrayContaining([['typo@klant.nl', 'manual'], ['gone@klant.nl', 'unsubscribe']]));
    expect(list.json().count).toBe(emails.length);
    const del = (email: string) => svc.app.inject({ method: 'DELETE', url: `/admin/suppressions/${encodeURIComponent(email)}`, headers: adminHeaders });
    expect((await del('TYPO@klant.nl')).json()).toEqual({ email: 'typo@klant.nl', removed: true });
    // D171: an unsubscribe the operator entered is the operator's to take off; one made through the link is not
    expect((await del('gone@klant.nl')).statusCode).toBe(200);
    const unsub = await del('olga@klant.nl');
    expect([unsub.statusCode, unsub.json().error]).toEqual([409, 'suppression_unsubscribed']);
    const none = await del('typo@klant.nl');
    expect([none.statusCode, none.json().error]).toEqual([404, 'suppression_not_found']);
    expect(await svc.deps.db.selectFrom('email_suppressions').select('email_lower').where('email_lower', 'in', ['typo@klant.nl', 'gone@klant.nl', 'olga@klant.nl']).execute()).toEqual([
      { email_lower: 'olga@klant.nl' },
    ]);
  });
});

describe('referral codes', () => {
  it('reports {email, code, matched} against the codes the operator added', async () => {
    const add = await svc.app.inject({ method: 'POST', url: '/admin/referral-codes', headers: adminHeaders, payload: { codes: ['ZOMER2026', 'vriend-42'] } });
    expect(add.statusCode).toBe(201);
    expect(add.json()).toEqual({ added: 2, codes: ['ZOMER2026', 'vriend-42'] });
    const again = await svc.app.inject({ method: 'POST', url: '/admin/referral-codes', headers: adminHeaders, payload: { code: 'zomer2026' } });
    expect(again.json()).toEqual({ added: 0, codes: ['zomer2026'] });
    expect((await svc.app.inject({ method: 'POST', url: '/admin/referral-codes', headers: adminHeaders, payload: { codes: [] } })).statusCode).toBe(400);

    const res = await postCustomers(svc, partner.apiKey, {
      consent: true,
      send_invite: false,
      customers: [
        { name: 'R1', email: 'r1@klant.nl', referral_code: 'zomer2026' },
        { name: 'R2', email: 'r2@klant.nl', Referral: 'ONBEKEND' },
        { name: 'R3', email: 'r3@klant.nl', VRIENDENCODE: 'VRIEND-42' },
        { name: 'R4', email: 'r4@klant.nl' },
      ],
    });
    expect(res.json().referral_codes).toEqual([
      { email: 'r1@klant.nl', code: 'zomer2026', matched: true },
      { email: 'r2@klant.nl', code: 'ONBEKEND', matched: false },
      { email: 'r3@klant.nl', code: 'VRIEND-42', matched: true },
    ]);
    const stored = await svc.deps.db
      .selectFrom('partner_drafts')
      .select(['email', 'referral_code', 'referral_matched'])
      .where('email', 'in', ['r1@klant.nl', 'r2@klant.nl', 'r3@klant.nl'])
      .orderBy('email')
      .execute();
    expect(stored).toEqual([
      { email: 'r1@klant.nl', referral_code: 'zomer2026', referral_matched: true },
      { email: 'r2@klant.nl', referral_code: 'ONBEKEND', referral_matched: false },
      { email: 'r3@klant.nl', referral_code: 'VRIEND-42', referral_matched: true },
    ]);
  });
});

describe('GET /admin/outbox pages (D131)', () => {
  it('pages through more messages than one page: no repeats, no gaps, count of every matching message', async () => {
    // 25 sent messages to one address, in threes at the same instant: the id breaks the ties of created_at
    const at = (i: number) => new Date(Date.UTC(2026, 10, 1, 9, Math.floor(i / 3)));
    await svc.deps.db
      .insertInto('outbox_messages')
      .values(
        Array.from({ length: 25 }, (_, i) => ({
          to_email: 'Pager@klant.nl',
          subject: `Bericht ${i}`,
          body: 'body',
          unsubscribe_token: `pager-token-${i}-xxxxxx`,
          created_at: at(i),
          next_attempt_at: at(i),
          status: 'sent' as const,
          sent_at: at(i),
        })),
      )
      .execute();
    const get = (qs: string) => svc.app.inject({ method: 'GET', url: `/admin/outbox${qs}`, headers: adminHeaders });

    const first = (await get('?to=pager@klant.nl')).json();
    expect(first).toMatchObject({ limit: 100, offset: 0, count: 25 }); // default limit 100
    expect(first.messages).toHaveLength(25);
    const seen: string[] = [];
    for (let offset = 0; offset < 30; offset += 10) {
      const res = await get(`?to=PAGER@klant.nl&limit=10&offset=${offset}`);
      expect(res.statusCode).toBe(200);
      const page = res.json();
      expect(page).toMatchObject({ limit: 10, offset, count: 25 });
      expect(page.messages).toHaveLength(Math.min(10, 25 - offset));
      seen.push(...page.messages.map((m: { subject: string }) => m.subject));
    }
    expect(new Set(seen).size).toBe(25);
    expect(seen).toEqual(first.messages.map((m: { subject: string }) => m.subject)); // the pages join up to the whole list
    // newest first
    const created = first.messages.map((m: { created_at: string }) => m.created_at);
    expect([...created].sort().reverse()).toEqual(created);
    expect((await get('?to=pager@klant.nl&offset=25')).json()).toMatchObject({ messages: [], count: 25, offset: 25 });
    // without the filter: every message of the outbox is counted
    const all = (await get('?limit=1')).json();
    expect(all.messages).toHaveLength(1);
    expect(all.count).toBe(Number((await svc.deps.db.selectFrom('outbox_messages').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n));
    expect(all.count).toBeGreaterThan(25);

    for (const [qs, param] of [['?limit=0', 'limit'], ['?limit=1001', 'limit'], ['?offset=-1', 'offset'], ['?limit=abc', 'limit']] as const) {
      const res = await get(qs);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_request');
      expect(res.json().detail).toContain(param);
    }
    expect((await get('?limit=1000')).statusCode).toBe(200);
  });
});
