// GET /energy (C6.5), GET /v1/ere-positions (C2.5), the sandbox register-ere helper (C2.6) and the ere-review
// job, on examples computed by hand.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, aUser, bearer, type TestPartner } from '../helpers/factories.ts';
import { aCharger, anAccountWithConnection, anEnergyMonth, aSession } from '../helpers/energy-factories.ts';

let svc: TestService;
const admin = bearer(TEST_ADMIN_TOKEN);

beforeAll(async () => {
  svc = await createTestService({ clock: testClock('2026-11-22T10:00:00Z'), env: { RENEWABLE_SHARE: '2026:0.505', ERE_REVIEW_DAYS: '14' } });
});
afterAll(() => svc.close());

const runJob = async (name: string) => {
  const res = await svc.app.inject({ method: 'POST', url: `/admin/jobs/${name}/run`, headers: admin });
  expect(res.statusCode).toBe(200);
  return res.json().result;
};

describe('GET /energy', () => {
  it('shows MID energy of eligible accounts beside every charger, newest month first, with lifetime totals', async () => {
    const user = await aUser(svc.deps);
    const cpo = await aPartner(svc.deps);
    const a = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, eligible: true });
    const nonMid = await aCharger(svc.deps, { accountId: a.accountId, mid: false, ownerUserId: user.userId });
    const loose = await aCharger(svc.deps, { mid: false, ownerUserId: user.userId }); // no account
    const b = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, partnerId: cpo.partnerId }); // not eligible
    await aSession(svc.deps, a.midChargerId!, [['2026-10-05T08:00:00Z', 0], ['2026-10-05T10:00:00Z', 10_000]]);
    await aSession(svc.deps, nonMid, [['2026-10-06T08:00:00Z', 0], ['2026-10-06T10:00:00Z', 4_000]]);
    await aSession(svc.deps, a.midChargerId!, [['2026-11-03T08:00:00Z', 10_000], ['2026-11-03T09:00:00Z', 12_505]]);
    await aSession(svc.deps, loose, [['2026-11-04T08:00:00Z', 500], ['2026-11-04T09:00:00Z', 1_500]]);
    await anEnergyMonth(svc.deps, { connectionId: b.connectionId, month: '2026-09', kwh: '20.00', source: 'cpo' });
    await anEnergyMonth(svc.deps, { connectionId: b.connectionId, month: '2026-08', kwh: '5.00', source: 'cpo', status: 'rejected' });
    await runJob('energy-aggregate');
    // October of account a is registered: its ERE is the booked figure 10 × 0.332694 = 3.32694 → 3.33
    const oct = await svc.deps.db.selectFrom('energy_months').select('id').where('connection_id', '=', a.connectionId).where('month', '=', '2026-10').executeTakeFirstOrThrow();
    await svc.app.inject({ method: 'POST', url: `/admin/energy-months/${oct.id}/review`, headers: admin, payload: { action: 'start' } });
    const reg = await svc.app.inject({ method: 'POST', url: `/admin/energy-months/${oct.id}/review`, headers: admin, payload: { action: 'register' } });
    expect(reg.json()).toMatchObject({ status: 'registered', ere: 3.33 });

    const res = await svc.app.inject({ method: 'GET', url: '/energy', headers: bearer(user.token) });
    expect(res.statusCode).toBe(200);
    // November: MID 2,505 Wh → 2.51 kWh (estimate 2.51 × 0.332694 = 0.835… → 0.84 ERE); all chargers 2,505 + 1,000 Wh → 3.51
    // October: MID 10.00 kWh (3.33 ERE booked); all chargers 10,000 + 4,000 Wh = 14.00
    // September: account b is not eligible and delivered by its CPO: only in *_all; August was rejected in review
    expect(res.json()).toEqual({
      total_kwh: 12.51,
      total_ere_credits: 4.17,
      total_sessions: 2,
      total_kwh_all: 37.51,
      total_sessions_all: 4,
      months: [
        { month: '2026-11', kwh: 2.51, ere_credits: 0.84, sessions: 1, kwh_all: 3.51, sessions_all: 2 },
        { month: '2026-10', kwh: 10, ere_credits: 3.33, sessions: 1, kwh_all: 14, sessions_all: 2 },
        { month: '2026-09', kwh: 0, ere_credits: 0, sessions: 0, kwh_all: 20, sessions_all: 0 },
      ],
    });
  });

  it('a month a CPO delivered over an OCPP month counts once in the *_all figures (the CPO figure, not both)', async () => {
    const user = await aUser(svc.deps);
    const cpo = await aPartner(svc.deps);
    const a = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, partnerId: cpo.partnerId, eligible: true });
    const loose = await aCharger(svc.deps, { mid: false, ownerUserId: user.userId }); // no account: not the CPO's
    await aSession(svc.deps, a.midChargerId!, [['2026-10-05T08:00:00Z', 0], ['2026-10-05T10:00:00Z', 4_410]]);
    await aSession(svc.deps, a.midChargerId!, [['2026-09-05T08:00:00Z', 0], ['2026-09-05T10:00:00Z', 2_000]]);
    await aSession(svc.deps, loose, [['2026-10-06T08:00:00Z', 0], ['2026-10-06T09:00:00Z', 1_000]]);
    await runJob('energy-aggregate');
    // the CPO delivers October for the connection: 10 kWh in place of the 4.41 its charger metered
    const batch = await svc.app.inject({
      method: 'POST', url: '/v1/sessions:batch', headers: bearer(await cpo.cpoToken()),
      payload: { items: [{ connection_id: a.connectionId, month: '2026-10', kwh: 10 }] },
    });
    expect(batch.json().results[0].status).toBe('updated');
    const res = (await svc.app.inject({ method: 'GET', url: '/energy', headers: bearer(user.token) })).json();
    // October: 10 (CPO) + 1.00 (the loose charger) = 11, not 10 + 4.41 + 1; September stays the OCPP figure. The CPO
    // sent no session count, so its month has none (D205: it kept the OCPP month's one): the loose charger's one
    expect(res.months.map((m: { month: string; kwh: number; kwh_all: number; sessions_all: number }) => [m.month, m.kwh, m.kwh_all, m.sessions_all])).toEqual([
      ['2026-10', 10, 11, 1],
      ['2026-09', 2, 2, 1],
    ]);
    expect(res.total_kwh_all).toBe(13);
  });

  it('needs chargers:read and a personal token', async () => {
    const user = await aUser(svc.deps, { scopes: ['chargers:write'] });
    expect((await svc.app.inject({ method: 'GET', url: '/energy', headers: bearer(user.token) })).statusCode).toBe(403);
    const cpo = await aPartner(svc.deps);
    expect((await svc.app.inject({ method: 'GET', url: '/energy', headers: bearer(await cpo.cpoToken()) })).statusCode).toBe(401);
  });
});

describe('GET /v1/ere-positions', () => {
  let cpo: TestPartner;
  let a1: { accountId: string; connectionId: string };
  let a2: { accountId: string; connectionId: string };
  let a4: { accountId: string; connectionId: string };

  beforeAll(async () => {
    cpo = await aPartner(svc.deps);
    a1 = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId, cpoExternalRef: 'R-1', eligible: true, createdAt: new Date('2026-01-01T00:00:00Z') });
    a2 = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId, cpoExternalRef: 'R-2', eligible: true, payoutHandler: 'via_cpo_invoicing', feePct: '20', createdAt: new Date('2026-01-02T00:00:00Z') });
    a4 = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId, cpoExternalRef: 'R-3', createdAt: new Date('2026-01-03T00:00:00Z') });
    await anAccountWithConnection(svc.deps, { partnerId: (await aPartner(svc.deps)).partnerId, cpoExternalRef: 'R-1' }); // another partner's
    const claimed = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId });
    await svc.deps.db.updateTable('accounts').set({ access_channel: 'partner_claim' }).where('id', '=', claimed.accountId).execute();

    await anEnergyMonth(svc.deps, { connectionId: a1.connectionId, month: '2026-05', kwh: '300.00', status: 'registered', ere: '99.81' });
    await anEnergyMonth(svc.deps, { connectionId: a1.connectionId, month: '2026-07', kwh: '100.00', status: 'rejected' });
    await anEnergyMonth(svc.deps, { connectionId: a1.connectionId, month: '2026-10', kwh: '250.25', status: 'in_review' });
    await anEnergyMonth(svc.deps, { connectionId: a1.connectionId, month: '2026-11', kwh: '80.00' });
    await anEnergyMonth(svc.deps, { connectionId: a1.connectionId, month: '2025-12', kwh: '10.00', status: 'registered', ere: '3.33' });
    await anEnergyMonth(svc.deps, { connectionId: a2.connectionId, month: '2026-06', kwh: '420.50', status: 'registered', ere: '139.90' });

    // a2 settles through the CPO: sale 100 ERE at 0.180, fee 20 % → 14.40, paid to the partner
    const sale = (await svc.app.inject({ method: 'POST', url: '/admin/ere/sales', headers: admin, payload: { quarter: '2026-Q3', ere: 100, price_per_ere: '0.180' } })).json();
    const al = (await svc.app.inject({ method: 'POST', url: `/admin/ere/sales/${sale.sale_id}/allocations`, headers: admin, payload: { account_id: a2.accountId, ere: 100 } })).json();
    await svc.app.inject({ method: 'POST', url: `/admin/ere/allocations/${al.allocation_id}/payable`, headers: admin });
    const payout = await svc.app.inject({ method: 'POST', url: '/admin/ere/payouts', headers: admin, payload: { account_id: a2.accountId } });
    expect(payout.json()).toMatchObject({ paid_to: 'partner', partner_id: cpo.partnerId, ere: 100, net_eur: 14.4 });
    const stored = await svc.deps.db.selectFrom('ere_payouts').select(['paid_to', 'partner_id', 'net_cents']).where('account_id', '=', a2.accountId).execute();
    expect(stored).toEqual([{ paid_to: 'partner', partner_id: cpo.partnerId, net_cents: '1440' }]);
  });

  const get = async (qs: string) => svc.app.inject({ method: 'GET', url: `/v1/ere-positions${qs}`, headers: bearer(await cpo.cpoToken()) });

  it('lists one position per CPO account of the caller for the year, computed by hand', async () => {
    const res = await get('?year=2026');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ limit: 50, offset: 0, count: 3 });
    expect(body.positions.map((p: { cpo_external_ref: string }) => p.cpo_external_ref)).toEqual(['R-1', 'R-2', 'R-3']);
    // delivered 300 + 250.25 + 80 = 630.25 (July rejected, 2025 another year); pending 250.25 + 80 = 330.25
    //   October estimate 250.25 × 0.332694 = 83.2566… → 83.26; November 80 × 0.332694 = 26.61552 → 26.62
    expect(body.positions[0]).toEqual({
      account_id: a1.accountId,
      cpo_external_ref: 'R-1',
      compliance_year: 2026,
      ere_eligible: true,
      payout_handler: 'joulo_pays_customer',
      settled_to: 'customer',
      delivered_kwh: 630.25,
      pending_kwh: 330.25,
      registered_kwh: 300,
      registered_ere: 99.81,
      payable_net_eur: 0,
      paid_net_eur: 0,
      months: [
        { month: '2026-05', kwh: 300, status: 'registered', ere: 99.81, held_kwh: 0, hold: null },
        { month: '2026-07', kwh: 100, status: 'rejected', ere: 0, held_kwh: 0, hold: null },
        { month: '2026-10', kwh: 250.25, status: 'in_review', ere: 83.26, held_kwh: 0, hold: null },
        { month: '2026-11', kwh: 80, status: 'delivered', ere: 26.62, held_kwh: 0, hold: null },
      ],
    });
    expect(body.positions[1]).toEqual({
      account_id: a2.accountId,
      cpo_external_ref: 'R-2',
      compliance_year: 2026,
      ere_eligible: true,
      payout_handler: 'via_cpo_invoicing',
      settled_to: 'partner',
      delivered_kwh: 420.5,
      pending_kwh: 0,
      registered_kwh: 420.5,
      registered_ere: 139.9,
      payable_net_eur: 0,
      paid_net_eur: 14.4,
      months: [{ month: '2026-06', kwh: 420.5, status: 'registered', ere: 139.9, held_kwh: 0, hold: null }],
    });
    expect(body.positions[2]).toMatchObject({ account_id: a4.accountId, ere_eligible: false, delivered_kwh: 0, months: [] });
    const y2025 = (await get('?year=2025')).statusCode;
    expect(y2025).toBe(400);
  });

  it('filters by cpo_external_ref, pages with count = total matching, and refuses bounds', async () => {
    const one = (await get('?cpo_external_ref=R-2')).json();
    expect(one).toMatchObject({ count: 1, limit: 50, offset: 0 });
    expect(one.positions.map((p: { account_id: string }) => p.account_id)).toEqual([a2.accountId]);
    const page = (await get('?limit=1&offset=1')).json();
    expect(page).toMatchObject({ count: 3, limit: 1, offset: 1 });
    expect(page.positions.map((p: { account_id: string }) => p.account_id)).toEqual([a2.accountId]);
    expect((await get('?offset=5')).json()).toMatchObject({ count: 3, positions: [] });
    for (const qs of ['?limit=0', '?limit=201', '?offset=-1', '?limit=abc']) {
      const res = await get(qs);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
    const noScope = await cpo.cpoToken(['cpo:sessions:write']);
    const res = await svc.app.inject({ method: 'GET', url: '/v1/ere-positions', headers: bearer(noScope) });
    expect(res.statusCode).toBe(403);
    expect(res.json().required_scope).toBe('cpo:accounts:read');
  });
});

describe('POST /sandbox/connections/:connection_id/register-ere and the ere-review job', () => {
  it('registers a delivered month of the caller only', async () => {
    const cpo = await aPartner(svc.deps);
    const stranger = await aPartner(svc.deps);
    const a = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId });
    await anEnergyMonth(svc.deps, { connectionId: a.connectionId, month: '2026-09', kwh: '12.00' });
    const url = `/sandbox/connections/${a.connectionId}/register-ere`;
    // D149: no machtiging in force, nothing to register; the account need not be eligible otherwise (sandbox)
    const unsigned = await svc.app.inject({ method: 'POST', url, headers: bearer(await cpo.cpoToken()), payload: { month: '2026-09' } });
    expect([unsigned.statusCode, unsigned.json().error]).toEqual([409, 'month_not_covered']);
    await svc.deps.db.updateTable('connections').set({ mandate_status: 'active', mandate_valid_from: new Date('2026-09-20T08:00:00Z') }).where('id', '=', a.connectionId).execute();
    const call = (t: string, month: unknown) => svc.app.inject({ method: 'POST', url, headers: bearer(t), payload: { month } });

    const foreign = await call(await stranger.cpoToken(), '2026-09');
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error).toBe('connection_not_found');
    expect((await call(await cpo.cpoToken(), '2026-9')).json().error).toBe('invalid_month');
    const missing = await call(await cpo.cpoToken(), '2026-08');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toBe('energy_month_not_found');

    const ok = await call(cpo.apiKey, '2026-09'); // a sandbox partner key works too
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ ok: true, energy_month: { connection_id: a.connectionId, month: '2026-09', kwh: 12, status: 'registered', ere: 3.99 } }); // 12 × 0.332694 = 3.992328
    const again = await call(await cpo.cpoToken(), '2026-09');
    expect(again.json()).toEqual(ok.json());
    const row = await svc.deps.db.selectFrom('energy_months').select(['status', 'registered_at']).where('connection_id', '=', a.connectionId).executeTakeFirstOrThrow();
    expect(row.status).toBe('registered');
    expect(row.registered_at).not.toBeNull();
  });

  it('a month that ended before the machtiging came into force counts nowhere and cannot be registered (C5.4, D149)', async () => {
    const user = await aUser(svc.deps);
    const cpo = await aPartner(svc.deps);
    const a = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, partnerId: cpo.partnerId, cpoExternalRef: 'D149-1', eligible: true });
    // signed on 20 October, Amsterdam time (18:00 UTC): September ended before, October is the signing month
    await svc.deps.db.updateTable('connections').set({ mandate_valid_from: new Date('2026-10-20T18:00:00Z') }).where('id', '=', a.connectionId).execute();
    const token = bearer(await cpo.cpoToken());
    const batch = await svc.app.inject({
      method: 'POST', url: '/v1/sessions:batch', headers: token,
      payload: { items: [{ cpo_external_ref: 'D149-1', month: '2026-09', kwh: 123.45 }, { cpo_external_ref: 'D149-1', month: '2026-10', kwh: 100 }] },
    });
    expect(batch.json().counts).toMatchObject({ created: 2, rejected: 0 }); // delivered and shown, as the CPO sent them
    // October, the signing month, is taken whole (D31): 100 × 0.332694 = 33.27; September earns nothing
    const energy = (await svc.app.inject({ method: 'GET', url: '/energy', headers: bearer(user.token) })).json();
    expect(energy.months).toEqual([
      { month: '2026-10', kwh: 100, ere_credits: 33.27, sessions: 0, kwh_all: 100, sessions_all: 0 },
      { month: '2026-09', kwh: 0, ere_credits: 0, sessions: 0, kwh_all: 123.45, sessions_all: 0 },
    ]);
    const position = (await svc.app.inject({ method: 'GET', url: '/ere-position?year=2026', headers: bearer(user.token) })).json();
    expect([position.pending_kwh, position.pending_ere]).toEqual([100, 33.27]);
    const cpoView = (await svc.app.inject({ method: 'GET', url: '/v1/ere-positions?cpo_external_ref=D149-1', headers: token })).json();
    expect(cpoView.positions[0]).toMatchObject({
      delivered_kwh: 223.45,
      pending_kwh: 100,
      months: [{ month: '2026-09', kwh: 123.45, status: 'delivered', ere: 0 }, { month: '2026-10', kwh: 100, status: 'delivered', ere: 33.27 }],
    });
    const url = `/sandbox/connections/${a.connectionId}/register-ere`;
    const sept = await svc.app.inject({ method: 'POST', url, headers: token, payload: { month: '2026-09' } });
    expect([sept.statusCode, sept.json().error]).toEqual([409, 'month_not_covered']);
    expect(sept.json().detail).toContain('2026-10-20T18:00:00');
    expect((await svc.app.inject({ method: 'POST', url, headers: token, payload: { month: '2026-10' } })).json().energy_month).toMatchObject({ status: 'registered', ere: 33.27 });
    // the operator's review refuses it the same way
    const row = await svc.deps.db.selectFrom('energy_months').select('id').where('connection_id', '=', a.connectionId).where('month', '=', '2026-09').executeTakeFirstOrThrow();
    await svc.app.inject({ method: 'POST', url: `/admin/energy-months/${row.id}/review`, headers: admin, payload: { action: 'start' } });
    const reg = await svc.app.inject({ method: 'POST', url: `/admin/energy-months/${row.id}/review`, headers: admin, payload: { action: 'register' } });
    expect([reg.statusCode, reg.json().error]).toEqual([409, 'month_not_covered']);
  });

  it('ere-review moves delivered months whose review is due (14 days after the month) to in_review', async () => {
    const a = await anAccountWithConnection(svc.deps);
    const oct = await anEnergyMonth(svc.deps, { connectionId: a.connectionId, month: '2026-10', kwh: '1.00' }); // due 2026-11-15
    const nov = await anEnergyMonth(svc.deps, { connectionId: a.connectionId, month: '2026-11', kwh: '1.00' }); // due 2026-12-15
    const result = await runJob('ere-review');
    expect(result.months).toContain('2026-10');
    expect(result.months).not.toContain('2026-11');
    const rows = await svc.deps.db.selectFrom('energy_months').select(['id', 'status']).where('id', 'in', [oct, nov]).execute();
    expect(Object.fromEntries(rows.map((r) => [r.id, r.status]))).toEqual({ [oct]: 'in_review', [nov]: 'delivered' });
    const listed = await svc.app.inject({ method: 'GET', url: `/admin/energy-months?connection_id=${a.connectionId}&status=in_review`, headers: admin });
    expect(listed.json().energy_months.map((m: { id: string; month: string; status: string }) => [m.id, m.month, m.status])).toEqual([[oct, '2026-10', 'in_review']]);
    const unknown = await svc.app.inject({ method: 'POST', url: '/admin/energy-months/00000000-0000-4000-8000-000000000000/review', headers: admin, payload: { action: 'start' } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toBe('energy_month_not_found');
    // registering needs an ERE-eligible account (C2.8)
    const notEligible = await svc.app.inject({ method: 'POST', url: `/admin/energy-months/${oct}/review`, headers: admin, payload: { action: 'register' } });
    expect(notEligible.statusCode).toBe(409);
    expect(notEligible.json().error).toBe('account_not_eligible');
  });
});

describe('GET /admin/energy-months pages (D131)', () => {
  it('pages through more months than one page: no repeats, no gaps, count of every matching month, filters kept', async () => {
    // 25 delivered months of one month, made at one instant: the order falls to the id (the unique tie-breaker)
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      const a = await anAccountWithConnection(svc.deps);
      ids.push(await anEnergyMonth(svc.deps, { connectionId: a.connectionId, month: '2031-03', kwh: '1.00', status: i === 7 ? 'rejected' : 'delivered' }));
    }
    await svc.deps.db.updateTable('energy_months').set({ created_at: new Date('2031-04-01T00:00:00Z') }).where('id', 'in', ids).execute();
    const get = (qs: string) => svc.app.inject({ method: 'GET', url: `/admin/energy-months${qs}`, headers: admin });

    const whole = (await get('?month=2031-03')).json();
    expect(whole).toMatchObject({ limit: 100, offset: 0, count: 25 }); // default limit 100
    expect(whole.energy_months.map((m: { id: string }) => m.id)).toEqual([...ids].sort());
    const seen: string[] = [];
    for (let offset = 0; offset < 30; offset += 10) {
      const res = await get(`?month=2031-03&limit=10&offset=${offset}`);
      expect(res.statusCode).toBe(200);
      const page = res.json();
      expect(page).toMatchObject({ limit: 10, offset, count: 25 });
      expect(page.energy_months).toHaveLength(Math.min(10, 25 - offset));
      seen.push(...page.energy_months.map((m: { id: string }) => m.id));
    }
    expect(seen).toEqual([...ids].sort()); // every month once, in order
    expect((await get('?month=2031-03&offset=25')).json()).toMatchObject({ energy_months: [], count: 25 });
    // the filters still apply, to the rows and to the count
    const delivered = (await get('?month=2031-03&status=delivered&limit=5')).json();
    expect(delivered).toMatchObject({ count: 24, limit: 5 });
    expect(delivered.energy_months).toHaveLength(5);
    expect((await get(`?month=2031-03&status=rejected`)).json().energy_months.map((m: { id: string }) => m.id)).toEqual([ids[7]]);

    for (const [qs, param] of [['?limit=0', 'limit'], ['?limit=1001', 'limit'], ['?offset=-1', 'offset'], ['?offset=x', 'offset']] as const) {
      const res = await get(qs);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_request');
      expect(res.json().detail).toContain(param);
    }
    expect((await get('?limit=1000')).statusCode).toBe(200);
  });
});
