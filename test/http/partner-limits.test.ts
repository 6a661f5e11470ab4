// spec §4.2 / §8: 1,000 rows per request, the rolling cap per partner (also under concurrent uploads),
// idempotency (already_drafted), the error bodies of §7 / C6.1, and the key checks of spec §5 / C1.3.
import crypto from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock, type TestClock } from '../helpers/clock.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { draftsOf, postCustomers, postImport } from '../helpers/partner-factories.ts';
import { uploadCustomers } from '../../src/domain/partners/index.ts';
import { hashSecret } from '../../src/lib/secrets.ts';

let svc: TestService;
let clock: TestClock;
let partner: TestPartner;

beforeAll(async () => {
  clock = testClock('2026-11-22T10:00:00Z');
  svc = await createTestService({ clock });
  partner = await aPartner(svc.deps);
});
afterAll(async () => svc?.close());

const rows = (n: number, prefix: string, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ name: `Klant ${from + i}`, email: `${prefix}${from + i}@klant.nl` }));

describe('request limit and rolling cap', () => {
  it('turns at most 1,000 of 1,200 rows into drafts; the other 200 are over_request_limit', async () => {
    const res = await postCustomers(svc, partner.apiKey, { consent: true, customers: rows(1200, 'bulk') });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.added).toBe(1000);
    expect(body.created).toHaveLength(1000);
    expect(body.skipped.over_request_limit).toBe(200);
    expect(body.rejected).toHaveLength(200);
    expect(body.rejected[0]).toEqual({ email: 'bulk1000@klant.nl', reason: 'over_request_limit', row: 1001 });
    expect(body.rejected.every((r: { reason: string }) => r.reason === 'over_request_limit')).toBe(true);
    expect(body.cap.remaining_before).toBe(5000);
    const stored = await draftsOf(svc.deps, partner.partnerId);
    expect(stored).toHaveLength(1000);
    expect(new Set(stored.map((d) => d.email)).has('bulk999@klant.nl')).toBe(true);
    expect(new Set(stored.map((d) => d.email)).has('bulk1000@klant.nl')).toBe(false);
    // send_invite defaults to true: one invite per draft, no links in claim_urls
    expect(body.claim_urls).toEqual([]);
    const { n } = await svc.deps.db.selectFrom('outbox_messages').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    expect(Number(n)).toBe(1000);
  });

  it('counts the rolling cap across requests and reports remaining_before', async () => {
    const p = await aPartner(svc.deps, { rolling_days: 7, rolling_cap: 5 });
    const r1 = (await postCustomers(svc, p.apiKey, { consent: true, send_invite: false, customers: rows(3, 'cap') })).json();
    expect(r1.added).toBe(3);
    expect(r1.cap).toEqual({ rolling_days: 7, rolling_cap: 5, remaining_before: 5 });

    clock.advance(3 * 86_400_000);
    const r2 = (await postCustomers(svc, p.apiKey, { consent: true, send_invite: false, customers: rows(3, 'cap', 3) })).json();
    expect(r2.added).toBe(2);
    expect(r2.cap.remaining_before).toBe(2);
    expect(r2.skipped.over_cap).toBe(1);
    expect(r2.rejected).toEqual([{ email: 'cap5@klant.nl', reason: 'over_cap', row: 3 }]);

    const r3 = (await postCustomers(svc, p.apiKey, { consent: true, send_invite: false, customers: rows(1, 'cap', 6) })).json();
    expect(r3.added).toBe(0);
    expect(r3.cap.remaining_before).toBe(0);
    expect(r3.rejected).toEqual([{ email: 'cap6@klant.nl', reason: 'over_cap', row: 1 }]);

    // the first three drafts leave the 7-day window: room for three again
    clock.advance(4 * 86_400_000 + 1000);
    const r4 = (await postCustomers(svc, p.apiKey, { consent: true, send_invite: false, customers: rows(4, 'cap', 6) })).json();
    expect(r4.cap.remaining_before).toBe(3);
    expect(r4.added).toBe(3);
    expect(r4.skipped.over_cap).toBe(1);
    expect(await draftsOf(svc.deps, p.partnerId)).toHaveLength(8);
  });

  it('never lets two concurrent uploads of one partner pass the cap', async () => {
    const p = await aPartner(svc.deps, { rolling_cap: 5 });
    const [a, b] = await Promise.all([
      postCustomers(svc, p.apiKey, { consent: true, send_invite: false, customers: rows(4, 'race-a') }),
      postImport(svc, p.apiKey, { consent: true, send_invite: false, rows: rows(4, 'race-b') }),
    ]);
    const added = a.json().added + b.json().added;
    expect(added).toBe(5);
    expect(a.json().skipped.over_cap + b.json().skipped.over_cap).toBe(3);
    expect(await draftsOf(svc.deps, p.partnerId)).toHaveLength(5);
  });

  it('is idempotent: the same upload twice creates no second draft (already_drafted)', async () => {
    const p = await aPartner(svc.deps);
    const body = {
      consent: true,
      send_invite: true,
      customers: [
        { name: 'Anna', email: 'anna@klant.nl', external_ref: 'A-1' },
        { name: 'Bram', email: 'bram@klant.nl', external_ref: 'B-1' },
      ],
    };
    const first = (await postCustomers(svc, p.apiKey, body)).json();
    expect(first.added).toBe(2);
    const again = (await postCustomers(svc, p.apiKey, body)).json();
    expect(again.added).toBe(0);
    expect(again.created).toEqual([]);
    expect(again.rejected).toEqual([
      { email: 'anna@klant.nl', reason: 'already_drafted', row: 1 },
      { email: 'bram@klant.nl', reason: 'already_drafted', row: 2 },
    ]);
    expect(again.skipped.already_drafted).toBe(2);
    expect(await draftsOf(svc.deps, p.partnerId)).toHaveLength(2);
    const invites = await svc.deps.db.selectFrom('outbox_messages').select('to_email').where('to_email', 'in', ['anna@klant.nl', 'bram@klant.nl']).execute();
    expect(invites).toHaveLength(2);
  });
});

describe('errors (spec §7, C6.1)', () => {
  it('requires consent: true (400 consent_required with message)', async () => {
    for (const consent of [undefined, false, 'true']) {
      const res = await postCustomers(svc, partner.apiKey, { consent, customers: rows(1, 'noconsent') });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'consent_required', message: expect.any(String) });
    }
    const imp = await postImport(svc, partner.apiKey, { csv: 'naam,email\nA,a@klant.nl' });
    expect(imp.statusCode).toBe(400);
    expect(imp.json().error).toBe('consent_required');
    expect(await svc.deps.db.selectFrom('partner_drafts').select('id').where('email', '=', 'noconsent0@klant.nl').execute()).toEqual([]);
  });

  it('refuses a customers value that is not a non-empty array of objects', async () => {
    for (const customers of [undefined, [], 'x', [1], [null]]) {
      const res = await postCustomers(svc, partner.apiKey, { consent: true, customers });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'customers must be a non-empty array of { name, email }' });
    }
  });

  it('adds nothing on an import without rows and csv', async () => {
    const res = await postImport(svc, partner.apiKey, { consent: true });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, added: 0, created: [], rejected: [] });
  });

  it('answers 403 when the key names no partner, and 500 Failed to create drafts when storing fails', async () => {
    await expect(uploadCustomers(svc.deps, crypto.randomUUID(), { consent: true, customers: rows(1, 'x') })).rejects.toMatchObject({
      code: 'No partner is linked to this API key',
    });
    const { statusForCode } = await import('../../src/http/errors.ts');
    expect(statusForCode('No partner is linked to this API key')).toBe(403);

    // a real storage failure: the batch table is briefly unavailable
    await sql`alter table partner_batches rename to partner_batches_away`.execute(svc.deps.db);
    try {
      const res = await postCustomers(svc, partner.apiKey, { consent: true, customers: rows(1, 'fail') });
      expect(res.statusCode).toBe(500);
      expect(res.json().error).toBe('Failed to create drafts');
      expect(JSON.stringify(res.json())).not.toMatch(/partner_batches/);
    } finally {
      await sql`alter table partner_batches_away rename to partner_batches`.execute(svc.deps.db);
    }
    expect(await svc.deps.db.selectFrom('partner_drafts').select('id').where('email', '=', 'fail0@klant.nl').execute()).toEqual([]);
  });
});

describe('partner keys (spec §5, C1.3)', () => {
  it('keeps partners apart: another partner sees none of the first partner’s drafts', async () => {
    const a = await aPartner(svc.deps);
    const b = await aPartner(svc.deps);
    const ra = (await postCustomers(svc, a.apiKey, { consent: true, send_invite: false, customers: [{ name: 'Cor', email: 'cor@klant.nl', external_ref: 'R-1' }] })).json();
    expect(ra.added).toBe(1);
    // the same e-mail and external_ref at partner B are B's own customer: no already_drafted, no conflict
    const rb = (await postCustomers(svc, b.apiKey, { consent: true, send_invite: false, customers: [{ name: 'Cor', email: 'cor@klant.nl', external_ref: 'R-1' }] })).json();
    expect(rb.added).toBe(1);
    expect(rb.rejected).toEqual([]);
    expect(rb.created[0].draft_id).not.toBe(ra.created[0].draft_id);
    expect(rb.cap.remaining_before).toBe(5000);
    expect((await draftsOf(svc.deps, a.partnerId)).map((d) => d.id)).toEqual([ra.created[0].draft_id]);
    expect((await draftsOf(svc.deps, b.partnerId)).map((d) => d.id)).toEqual([rb.created[0].draft_id]);
  });

  it('refuses a key of the other environment with 401 and a detail', async () => {
    const key = 'pk_live_' + crypto.randomBytes(24).toString('base64url');
    await svc.deps.db
      .insertInto('partner_api_keys')
      .values({ partner_id: partner.partnerId, key_hash: hashSecret(key), key_hint: 'pk_live_…', environment: 'production' })
      .execute();
    const res = await postCustomers(svc, key, { consent: true, customers: rows(1, 'wrongenv') });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ error: 'Missing or invalid API token', detail: expect.stringMatching(/production/) });
    expect(await svc.deps.db.selectFrom('partner_drafts').select('id').where('email', '=', 'wrongenv0@klant.nl').execute()).toEqual([]);
  });

  it('refuses other credentials on /partner routes (C1.2) and a missing key', async () => {
    const token = await partner.cpoToken();
    const cpo = await svc.app.inject({ method: 'POST', url: '/partner/customers', headers: bearer(token), payload: { consent: true, customers: rows(1, 'cpo') } });
    expect(cpo.statusCode).toBe(401);
    expect(cpo.json()).toMatchObject({ error: 'Missing or invalid API token', detail: expect.stringMatching(/partner API key/) });
    const none = await svc.app.inject({ method: 'POST', url: '/partner/drafts/import', payload: { consent: true } });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toEqual({ error: 'Missing or invalid API token' });
  });
});

describe('OpenAPI (issue 7 item 7)', () => {
  it('documents both endpoints, the claim page as text/html, and the partner admin routes', async () => {
    const doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    for (const path of ['/partner/customers', '/partner/drafts/import']) {
      const op = doc.paths[path].post;
      expect(op.security).toEqual([{ partnerKey: [] }]);
      const ok = op.responses['200'].content['application/json'].schema;
      expect(Object.keys(ok.properties).sort()).toEqual(
        ['added', 'address_ignored', 'batch_id', 'cap', 'claim_urls', 'created', 'ok', 'referral_codes', 'rejected', 'skipped'].sort(),
      );
      expect(Object.keys(ok.properties.skipped.properties)).toHaveLength(12);
      expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['400', '401', '403', '500']));
    }
    expect(doc.paths['/claim/{token}'].get.responses['200'].content['text/html']).toBeDefined();
    expect(doc.paths['/claim/{token}'].post.responses['410'].content['text/html']).toBeDefined();
    expect(doc.paths['/admin/outbox'].get).toBeDefined();
    expect(doc.paths['/admin/referral-codes'].post).toBeDefined();
  });
});
