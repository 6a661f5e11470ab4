// D230: a body that names its connection more than once (connection_id, account_id, cpo_external_ref) with targets
// of different accounts changes nothing and answers 409 ambiguous_connection, on POST /v1/connections:update,
// POST /v1/mandate-links and per item of POST /v1/sessions:batch. Targets that name the same connection keep working.
// Before, connection_id silently won: a stale connection_id beside the right account_id corrected another customer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { anAccount, anEan, aSignedMandate, type CreatedAccount } from '../helpers/onboarding-factories.ts';

describe('D230: targets that contradict each other', () => {
  let svc: TestService;
  let partner: TestPartner;
  let other: TestPartner;
  let token: string;

  beforeAll(async () => {
    svc = await createTestService({ clock: testClock('2026-11-22T10:00:00Z') });
    partner = await aPartner(svc.deps);
    other = await aPartner(svc.deps);
    token = await partner.cpoToken();
  });
  afterAll(() => svc?.close());

  const post = (url: string, payload: object, t = token) => svc.app.inject({ method: 'POST', url, headers: bearer(t), payload });
  /** the connection as the CPO reads it back: GET /v1/accounts by its reference */
  const listed = async (a: CreatedAccount) => {
    const res = await svc.app.inject({ method: 'GET', url: `/v1/accounts?cpo_external_ref=${encodeURIComponent(a.cpo_external_ref)}`, headers: bearer(token) });
    return res.json().accounts[0].connections as Array<{ connection_id: string; ean_code: string; mandate_status: string; status: string }>;
  };

  it('POST /v1/connections:update: connection_id of account B beside account_id or cpo_external_ref of account A → 409, nothing changes', async () => {
    const a = await anAccount(svc, partner);
    const b = await anAccount(svc, partner);
    await aSignedMandate(svc, b.connection_id, { partner });
    for (const targets of [
      { account_id: a.account_id, connection_id: b.connection_id },
      { connection_id: b.connection_id, cpo_external_ref: a.cpo_external_ref },
      { account_id: a.account_id, cpo_external_ref: b.cpo_external_ref },
      { connection_id: a.connection_id, account_id: a.account_id, cpo_external_ref: b.cpo_external_ref },
    ]) {
      const res = await post('/v1/connections:update', { ...targets, connection: { ean_code: anEan() }, acknowledge_mandate_lapses: true });
      expect(res.statusCode, JSON.stringify(targets)).toBe(409);
      expect(res.json()).toEqual({ error: 'ambiguous_connection', detail: expect.stringMatching(/ name different connections; /) });
    }
    const res = await post('/v1/connections:update', { account_id: a.account_id, connection_id: b.connection_id, connection: { city: 'Zwolle' } });
    expect(res.json().detail).toBe('connection_id and account_id name different connections; send one of them, or ones that name the same connection.');
    // neither customer's connection changed, and B's signed machtiging did not lapse
    expect(await listed(a)).toEqual([expect.objectContaining({ ean_code: a.ean_code, mandate_status: 'pending' })]);
    expect(await listed(b)).toEqual([expect.objectContaining({ ean_code: b.ean_code, mandate_status: 'active' })]);
  });

  it('POST /v1/connections:update: targets that name the same connection work, and connection_id settles an account with several', async () => {
    const a = await anAccount(svc, partner);
    const ean = anEan();
    const res = await post('/v1/connections:update', {
      connection_id: a.connection_id,
      account_id: a.account_id,
      cpo_external_ref: ` ${a.cpo_external_ref} `,
      connection: { ean_code: ean },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ changed: true, connection_id: a.connection_id, account_id: a.account_id, ean_code: ean });

    // a second active connection on the account (no API makes one): account_id alone is ambiguous, with connection_id not
    const second = await svc.deps.db
      .insertInto('connections')
      .values({ account_id: a.account_id, ean_code: anEan(), street: 'X', house_number: '1', postal_code: '1000AA', city: 'A', ean_validation_status: 'matched' })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect((await post('/v1/connections:update', { account_id: a.account_id, connection: { city: 'Zwolle' } })).json().error).toBe('ambiguous_connection');
    const both = await post('/v1/connections:update', { account_id: a.account_id, connection_id: second.id, connection: { city: 'Zwolle' } });
    expect(both.statusCode, both.body).toBe(200);
    expect(both.json()).toMatchObject({ changed: true, connection_id: second.id });
  });

  it('POST /v1/connections:update: a second target that names nothing of the caller’s is 404, as it would be alone', async () => {
    const a = await anAccount(svc, partner);
    const foreign = await anAccount(svc, other);
    for (const extra of [{ account_id: '3f6c2a4e-8b1d-4c7e-9a2f-5d0e1b7c9a31' }, { account_id: foreign.account_id }, { cpo_external_ref: 'nobody-has-this-ref' }]) {
      const res = await post('/v1/connections:update', { connection_id: a.connection_id, ...extra, connection: { city: 'Zwolle' } });
      expect(res.statusCode, JSON.stringify(extra)).toBe(404);
      expect(res.json().error).toBe('connection_not_found');
    }
  });

  it('POST /v1/mandate-links: contradicting targets → 409 and no link; agreeing targets → 201', async () => {
    const a = await anAccount(svc, partner);
    const b = await anAccount(svc, partner);
    const res = await post('/v1/mandate-links', { account_id: a.account_id, connection_id: b.connection_id });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'ambiguous_connection', detail: expect.stringMatching(/^connection_id and account_id name different connections/) });
    const ref = await post('/v1/mandate-links', { cpo_external_ref: b.cpo_external_ref, account_id: a.account_id });
    expect(ref.statusCode).toBe(409);
    expect(await svc.deps.db.selectFrom('mandate_links').select('id').where('connection_id', 'in', [a.connection_id, b.connection_id]).execute()).toEqual([]);

    const ok = await post('/v1/mandate-links', { account_id: a.account_id, connection_id: a.connection_id, cpo_external_ref: a.cpo_external_ref });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(ok.json()).toMatchObject({ connection_id: a.connection_id, account_id: a.account_id });
  });

  it('POST /v1/sessions:batch: an item with contradicting targets is rejected ambiguous_connection, the others are written', async () => {
    const a = await anAccount(svc, partner);
    const b = await anAccount(svc, partner);
    const res = await svc.app.inject({
      method: 'POST',
      url: '/v1/sessions:batch',
      headers: bearer(await partner.cpoToken(['cpo:sessions:write'])),
      payload: {
        items: [
          { connection_id: b.connection_id, account_id: a.account_id, month: '2026-09', kwh: 1 },
          { connection_id: a.connection_id, cpo_external_ref: b.cpo_external_ref, month: '2026-09', kwh: 2 },
          { account_id: b.account_id, cpo_external_ref: a.cpo_external_ref, month: '2026-09', kwh: 3 },
          { account_id: a.account_id, cpo_external_ref: a.cpo_external_ref, month: '2026-09', kwh: 4 },
          { connection_id: b.connection_id, account_id: b.account_id, month: '2026-09', kwh: 5 },
        ],
      },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toEqual([
      { index: 0, connection_id: b.connection_id, month: '2026-09', kwh: 1, status: 'rejected', error: 'ambiguous_connection' },
      { index: 1, connection_id: a.connection_id, month: '2026-09', kwh: 2, status: 'rejected', error: 'ambiguous_connection' },
      { index: 2, connection_id: null, month: '2026-09', kwh: 3, status: 'rejected', error: 'ambiguous_connection' },
      { index: 3, connection_id: a.connection_id, month: '2026-09', kwh: 4, status: 'created' },
      { index: 4, connection_id: b.connection_id, month: '2026-09', kwh: 5, status: 'created' },
    ]);
    const months = await svc.deps.db.selectFrom('energy_months').select(['connection_id', 'kwh']).where('connection_id', 'in', [a.connection_id, b.connection_id]).execute();
    expect(months.map((m) => [m.connection_id, m.kwh]).sort()).toEqual([[a.connection_id, '4.00'], [b.connection_id, '5.00']].sort());
  });
});
