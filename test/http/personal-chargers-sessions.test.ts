// Personal API (spec §2, §4.3, §5; C4.9, C5.1–C5.2, C6.3): POST/GET /chargers and GET /sessions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/lib/secrets.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, aUser, bearer } from '../helpers/factories.ts';
import { aPartnerCharger } from '../helpers/partner-factories.ts';
import { anOcppCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let alice: { userId: string; token: string };
let bob: { userId: string; token: string };

beforeAll(async () => {
  svc = await createTestService();
  alice = await aUser(svc.deps);
  bob = await aUser(svc.deps);
});
afterAll(() => svc.close());

/** A session of `wh` Wh with its two register readings (at the start, and at the end or half an hour in). */
async function aSession(chargerId: string, startedAt: string, wh: number, endedAt: string | null = null) {
  const last = endedAt ?? new Date(new Date(startedAt).getTime() + 1_800_000).toISOString();
  const s = await svc.deps.db
    .insertInto('charging_sessions')
    .values({
      charger_id: chargerId,
      transaction_id: `t-${Math.random()}`,
      started_at: startedAt,
      ended_at: endedAt,
      status: endedAt ? 'completed' : 'active',
      energy_wh: wh,
      id_tag: 'TAG',
      // the span of its register readings, as the gateway keeps it
      first_reading_at: startedAt,
      last_reading_at: last,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await svc.deps.db
    .insertInto('meter_readings')
    .values([
      { charger_id: chargerId, session_id: s.id, connector_id: 1, measured_at: startedAt, wh: 1_000_000 },
      { charger_id: chargerId, session_id: s.id, connector_id: 1, measured_at: last, wh: 1_000_000 + wh },
    ])
    .execute();
  return s;
}

let ean = 0;

/** An ERE-eligible account of `userId` (C2.8: matched EAN, active mandate and connection, MID charger, IBAN). */
async function anEligibleAccount(userId: string, mandateValidFrom = '2026-01-01T00:00:00Z') {
  const acc = await svc.deps.db
    .insertInto('accounts')
    .values({ owner_user_id: userId, display_name: 'Home', iban_encrypted: svc.deps.cipher.encrypt('NL91ABNA0417164300'), partner_id: null, cpo_external_ref: null, signatory_full_name: null, signatory_email: null, signatory_phone: null, fee_pct: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  await svc.deps.db
    .insertInto('connections')
    .values({ account_id: acc.id, ean_code: `8716859${String(++ean).padStart(11, '0')}`, street: 'Dorpsstraat', house_number: '1', house_number_addition: null, postal_code: '1234AB', city: 'Utrecht', ean_validation_status: 'matched', mandate_status: 'active', mandate_valid_from: mandateValidFrom, ean_checked_at: null })
    .execute();
  return acc.id;
}

describe('POST /chargers (C4.9)', () => {
  it('registers an OCPP charger and shows its password once', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/chargers',
      headers: bearer(alice.token),
      payload: { nickname: 'Oprit', connection_type: 'ocpp', ocpp_identity: 'ALICE-CP-1' },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      id: expect.any(String),
      nickname: 'Oprit',
      connection_type: 'ocpp',
      status: 'offline',
      mid_certified: false,
      is_charging: false,
      ocpp: { identity: 'ALICE-CP-1', endpoint: expect.stringMatching(/^ws:\/\/.+\/ocpp$/), password: expect.any(String) },
    });
    expect(body.ocpp.password.length).toBeGreaterThanOrEqual(16);
    const row = await svc.deps.db.selectFrom('chargers').selectAll().where('id', '=', body.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ owner_user_id: alice.userId, ocpp_identity: 'ALICE-CP-1', password_hash: hashSecret(body.ocpp.password) });
    const list = await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(alice.token) });
    expect(JSON.stringify(list.json())).not.toContain(body.ocpp.password);

    const dup = await svc.app.inject({ method: 'POST', url: '/chargers', headers: bearer(bob.token), payload: { nickname: 'Mine', connection_type: 'ocpp', ocpp_identity: 'ALICE-CP-1' } });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toMatchObject({ error: 'ocpp_identity_taken' });
  });

  it('generates an identity when none is given and validates the body', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/chargers', headers: bearer(alice.token), payload: { nickname: 'Tweede', connection_type: 'ocpp' } });
    expect(res.statusCode).toBe(201);
    expect(res.json().ocpp.identity).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
    for (const payload of [
      { nickname: '', connection_type: 'ocpp' },
      { nickname: 'x'.repeat(101), connection_type: 'ocpp' },
      { nickname: 'ok', connection_type: 'cloud_api' },
      { nickname: 'ok', connection_type: 'ocpp', ocpp_identity: 'has space' },
    ]) {
      const bad = await svc.app.inject({ method: 'POST', url: '/chargers', headers: bearer(alice.token), payload });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error).toBe('invalid_request');
    }
    const otherAccount = await anEligibleAccount(bob.userId);
    const foreign = await svc.app.inject({ method: 'POST', url: '/chargers', headers: bearer(alice.token), payload: { nickname: 'x', connection_type: 'ocpp', account_id: otherAccount } });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error).toBe('account_not_found');
  });

  it('needs chargers:write to register and chargers:read to list', async () => {
    const reader = await aUser(svc.deps, { scopes: ['chargers:read'] });
    const res = await svc.app.inject({ method: 'POST', url: '/chargers', headers: bearer(reader.token), payload: { nickname: 'x', connection_type: 'ocpp' } });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'Insufficient scope', required_scope: 'chargers:write' });
    const writer = await aUser(svc.deps, { scopes: ['chargers:write'] });
    for (const url of ['/chargers', '/sessions']) {
      const r = await svc.app.inject({ method: 'GET', url, headers: bearer(writer.token) });
      expect(r.statusCode).toBe(403);
      expect(r.json()).toMatchObject({ error: 'Insufficient scope', required_scope: 'chargers:read' });
    }
    const none = await svc.app.inject({ method: 'GET', url: '/chargers' });
    expect(none.statusCode).toBe(401);
  });
});

describe('GET /chargers and GET /sessions', () => {
  let carol: { userId: string; token: string };
  let own: string;
  let viaAccount: string;
  let foreign: string;

  beforeAll(async () => {
    carol = await aUser(svc.deps);
    own = (await anOcppCharger(svc, carol, { nickname: 'Own' })).chargerId;
    const account = await anEligibleAccount(carol.userId);
    // a MID charger on carol's eligible account, owned by nobody directly
    viaAccount = (await anOcppCharger(svc, bob, { nickname: 'On account' })).chargerId;
    const model = await svc.deps.db
      .insertInto('catalog_models')
      .values({ brand: 'TestBrand', model: `M-${Date.now()}`, mid_meter: true, max_power_w: 11000, source_note: null })
      .returning('id')
      .executeTakeFirstOrThrow();
    await svc.deps.db.updateTable('chargers').set({ owner_user_id: null, account_id: account, mid_certified: true, catalog_model_id: model.id }).where('id', '=', viaAccount).execute();
    foreign = (await anOcppCharger(svc, bob, { nickname: 'Bob' })).chargerId;
    await aSession(own, '2026-03-01T10:00:00Z', 5000, '2026-03-01T12:00:00Z');
    await aSession(viaAccount, '2026-04-01T10:00:00Z', 10_000, '2026-04-01T13:00:00Z');
    await aSession(viaAccount, '2026-05-01T10:00:00Z', 1234, null);
    await aSession(foreign, '2026-04-02T10:00:00Z', 7000, '2026-04-02T11:00:00Z');
  });

  it("lists the user's own chargers and those of their accounts, never another user's", async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(carol.token) });
    expect(res.statusCode).toBe(200);
    const items = res.json().chargers as Array<Record<string, unknown>>;
    expect(items.map((c) => c.id).sort()).toEqual([own, viaAccount].sort());
    const charging = items.find((c) => c.id === viaAccount)!;
    expect(charging).toMatchObject({
      nickname: 'On account',
      mid_certified: true,
      is_charging: true,
      status: 'offline',
      current_session: { started_at: '2026-05-01T10:00:00Z', kwh_so_far: 1.23, id_tag: 'TAG', estimated_euro: 0.05, review: null },
    });
  });

  it('lists sessions newest first with ERE estimates per C5.1–C5.2 and the estimate basis', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/sessions', headers: bearer(carol.token) });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.limit).toBe(20);
    expect(body.offset).toBe(0);
    expect(body.estimate_basis).toEqual({ price_per_ere: 0.14, effective_fee_pct: 15 });
    expect(body.sessions.map((s: { started_at: string }) => s.started_at)).toEqual(['2026-05-01T10:00:00Z', '2026-04-01T10:00:00Z', '2026-03-01T10:00:00Z']);
    // 10 kWh × 0.332694 ERE/kWh = 3.32694 ERE → 3.33; × €0.140 × 85 % = €0.3959… → 0.40
    expect(body.sessions[1]).toEqual({
      id: expect.any(String),
      charger_id: viaAccount,
      charger_nickname: 'On account',
      started_at: '2026-04-01T10:00:00Z',
      ended_at: '2026-04-01T13:00:00Z',
      kwh: 10,
      status: 'completed',
      id_tag: 'TAG',
      counts_for_ere: true,
      ere_credits: 3.33,
      estimated_euro: 0.4,
      // C5.5: nothing held
      review: null,
      // C5.5: no signed meter values
      signed: { readings: 0, verified: 0, invalid: 0 },
    });
    // not MID and no eligible account: counted nowhere
    expect(body.sessions[2]).toMatchObject({ charger_id: own, kwh: 5, counts_for_ere: false, ere_credits: 0, estimated_euro: 0 });
  });

  it('filters by charger_id and by from/to on started_at, and pages with limit/offset', async () => {
    const q = async (qs: string) => (await svc.app.inject({ method: 'GET', url: `/sessions?${qs}`, headers: bearer(carol.token) })).json();
    expect((await q(`charger_id=${own}`)).sessions).toHaveLength(1);
    expect((await q(`charger_id=${foreign}`)).sessions).toEqual([]);
    expect((await q('from=2026-04-01T10:00:00Z&to=2026-04-30T00:00:00Z')).sessions.map((s: { kwh: number }) => s.kwh)).toEqual([10]);
    expect((await q('to=2026-03-31')).sessions.map((s: { kwh: number }) => s.kwh)).toEqual([5]);
    const page = await q('limit=1&offset=1');
    expect(page).toMatchObject({ limit: 1, offset: 1 });
    expect(page.sessions.map((s: { kwh: number }) => s.kwh)).toEqual([10]);
    expect((await q('limit=100&offset=3')).sessions).toEqual([]);
  });

  it('reads a date in from/to as a day in Amsterdam (D121)', async () => {
    const dave = await aUser(svc.deps);
    const ch = (await anOcppCharger(svc, dave)).chargerId;
    // 1 November 00:30 in Amsterdam (CET), and 31 October 23:59:59.500 there
    await aSession(ch, '2026-10-31T23:30:00Z', 1000, '2026-10-31T23:45:00Z');
    await aSession(ch, '2026-10-31T22:59:59.500Z', 2000, '2026-10-31T23:10:00Z');
    const kwh = async (qs: string) =>
      ((await svc.app.inject({ method: 'GET', url: `/sessions?${qs}`, headers: bearer(dave.token) })).json().sessions as Array<{ kwh: number }>).map((s) => s.kwh);
    expect(await kwh('from=2026-11-01')).toEqual([1]);
    expect(await kwh('to=2026-10-31')).toEqual([2]);
    expect(await kwh('from=2026-10-31&to=2026-10-31')).toEqual([2]);
    expect(await kwh('from=2026-11-01T00:00:00%2B01:00')).toEqual([1]);
  });

  it('refuses page bounds outside 1–100 and a negative offset, naming the parameter (C6.3)', async () => {
    for (const [qs, name] of [['limit=0', 'limit'], ['limit=101', 'limit'], ['offset=-1', 'offset'], ['limit=abc', 'limit'], ['charger_id=nope', 'charger_id'], ['from=yesterday', 'from']]) {
      const res = await svc.app.inject({ method: 'GET', url: `/sessions?${qs}`, headers: bearer(carol.token) });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'invalid_request', detail: expect.stringContaining(name!) });
    }
  });

  it('counts the Wh charged from the moment the machtiging is in force, splitting a session at that moment (C5.4)', async () => {
    const dave = await aUser(svc.deps);
    const account = await anEligibleAccount(dave.userId, '2026-06-15T12:00:00Z');
    const cp = (await anOcppCharger(svc, dave, { nickname: 'Dave' })).chargerId;
    await svc.deps.db.updateTable('chargers').set({ account_id: account, mid_certified: true }).where('id', '=', cp).execute();
    await aSession(cp, '2026-06-15T09:00:00Z', 10_000, '2026-06-15T11:00:00Z'); // ended before signing
    await aSession(cp, '2026-06-15T11:00:00Z', 10_000, '2026-06-15T13:00:00Z'); // spans the signing moment at 12:00
    await aSession(cp, '2026-06-16T09:00:00Z', 10_000, '2026-06-16T11:00:00Z'); // after signing
    const res = await svc.app.inject({ method: 'GET', url: '/sessions', headers: bearer(dave.token) });
    const sessions = res.json().sessions as Array<{ started_at: string; kwh: number; counts_for_ere: boolean; ere_credits: number; estimated_euro: number }>;
    // the spanning session: register 1,000,000 → 1,010,000 Wh over 11:00–13:00; at 12:00 it reads 1,005,000, so
    // 5,000 Wh count: 5 × 0.332694 = 1.66347 → 1.66 ERE; × €0.140 × 85 % = €0.19754 → 0.20; kwh stays 10
    expect(sessions.map((x) => [x.started_at, x.kwh, x.counts_for_ere, x.ere_credits, x.estimated_euro])).toEqual([
      ['2026-06-16T09:00:00Z', 10, true, 3.33, 0.4],
      ['2026-06-15T11:00:00Z', 10, true, 1.66, 0.2],
      ['2026-06-15T09:00:00Z', 10, false, 0, 0],
    ]);
  });

  it('uses the fee of the user\'s account agreement in estimate_basis and estimates', async () => {
    const erin = await aUser(svc.deps);
    const account = await anEligibleAccount(erin.userId);
    await svc.deps.db.updateTable('accounts').set({ fee_pct: '20' }).where('id', '=', account).execute();
    const cp = (await anOcppCharger(svc, erin, { nickname: 'Erin' })).chargerId;
    await svc.deps.db.updateTable('chargers').set({ account_id: account, mid_certified: true }).where('id', '=', cp).execute();
    await aSession(cp, '2026-07-01T09:00:00Z', 10_000, '2026-07-01T11:00:00Z');
    const body = (await svc.app.inject({ method: 'GET', url: '/sessions', headers: bearer(erin.token) })).json();
    expect(body.estimate_basis).toEqual({ price_per_ere: 0.14, effective_fee_pct: 20 });
    // 3.33 ERE × €0.140 = €0.4662 gross, × 80 % = €0.37296 → 0.37
    expect(body.sessions[0]).toMatchObject({ counts_for_ere: true, ere_credits: 3.33, estimated_euro: 0.37 });
  });

  it('lists a charger a CPO registered on the user\'s account as cloud_api', async () => {
    const frank = await aUser(svc.deps);
    const partner = await aPartner(svc.deps);
    const { chargerId } = await aPartnerCharger(svc.deps, { partnerId: partner.partnerId, brand: 'CloudBrand', serial: `SN-${Date.now()}` });
    const account = await anEligibleAccount(frank.userId);
    await svc.deps.db.updateTable('chargers').set({ account_id: account }).where('id', '=', chargerId).execute();
    const res = await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(frank.token) });
    expect(res.statusCode).toBe(200);
    expect(res.json().chargers).toEqual([expect.objectContaining({ id: chargerId, connection_type: 'cloud_api', status: 'offline', mid_certified: true })]);
    // the database holds the documented values (migrations/0063): no other can reach a response
    const other = svc.deps.db.updateTable('chargers').set({ connection_type: 'modbus' as never }).where('id', '=', chargerId).execute();
    await expect(other).rejects.toMatchObject({ code: '23514' });
    const channel = svc.deps.db.updateTable('accounts').set({ access_channel: 'api' as never }).where('id', '=', account).execute();
    await expect(channel).rejects.toMatchObject({ code: '23514' });
  });
});
