// The ERE ledger through the admin API (review, sales, allocations, payable, payouts) and GET /ere-position on a
// worked example whose every figure is computed by hand below (docs/ere-position.md walks the same example),
// including a second account whose November comes from OCPP sessions: one spanning the signing moment (C5.4) and
// one with a held step (C5.5).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, aUser, bearer } from '../helpers/factories.ts';
import { recomputeAllMonthlyEnergy } from '../../src/domain/energy/aggregate.ts';
import { anAccountWithConnection, anEnergyMonth, aSession } from '../helpers/energy-factories.ts';

let svc: TestService;
const admin = bearer(TEST_ADMIN_TOKEN);

beforeAll(async () => {
  // ERE per kWh 2026 = 0.505 × 183 × 3.6 / 1000 = 0.332694; indicative price 0.150; review 14 days after month end
  svc = await createTestService({
    clock: testClock('2026-11-22T10:00:00Z'),
    env: { ERE_INDICATIVE_PRICE_EUR: '0.150', ERE_FEE_PCT: '15', ERE_REVIEW_DAYS: '14', RENEWABLE_SHARE: '2026:0.505' },
  });
});
afterAll(() => svc.close());

const post = (url: string, payload: unknown = {}) => svc.app.inject({ method: 'POST', url, headers: admin, payload: payload as object });

describe('ERE ledger and GET /ere-position', () => {
  it('computes every field of the worked example', async () => {
    const user = await aUser(svc.deps);
    const partner = await aPartner(svc.deps);
    await svc.deps.db.updateTable('partners').set({ fee_pct: '20' }).where('id', '=', partner.partnerId).execute();
    const a = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, partnerId: partner.partnerId, eligible: true });
    const may = await anEnergyMonth(svc.deps, { connectionId: a.connectionId, month: '2026-05', kwh: '300.00', sessions: 20 });
    const jun = await anEnergyMonth(svc.deps, { connectionId: a.connectionId, month: '2026-06', kwh: '420.50', sessions: 25 });
    const jul = await anEnergyMonth(svc.deps, { connectionId: a.connectionId, month: '2026-07', kwh: '100.00', sessions: 5 });
    await anEnergyMonth(svc.deps, { connectionId: a.connectionId, month: '2026-10', kwh: '250.25', sessions: 12, status: 'in_review' });
    await anEnergyMonth(svc.deps, { connectionId: a.connectionId, month: '2026-11', kwh: '80.00', sessions: 4 });

    // The second account of the same user signed its machtiging on 2026-11-10 at 12:20 UTC. Its MID charger:
    // - a session spanning that moment: register 0 (10:00) → 2,000 (11:00) → 6,000 (13:00) → 8,000 (14:00); at 12:20
    //   the register reads 2,000 + 4,000 × 80/120 = 4,666.67 → 4,667 Wh, so 6,000 − 4,667 + 2,000 = 3,333 Wh count;
    // - a session with a held step: 8,000 → 14,000 → 900,000 (implausible for the charger: held) → 905,000, so
    //   6,000 + 5,000 = 11,000 Wh count and 886,000 Wh wait for an operator.
    // November of that connection: 3,333 + 11,000 = 14,333 Wh = 14.33 kWh, 2 sessions (delivered).
    const b = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, eligible: true });
    await svc.deps.db.updateTable('connections').set({ mandate_valid_from: new Date('2026-11-10T12:20:00Z') }).where('id', '=', b.connectionId).execute();
    await aSession(svc.deps, b.midChargerId!, [['2026-11-10T10:00:00Z', 0], ['2026-11-10T11:00:00Z', 2_000], ['2026-11-10T13:00:00Z', 6_000], ['2026-11-10T14:00:00Z', 8_000]]);
    await aSession(svc.deps, b.midChargerId!, [['2026-11-15T08:00:00Z', 8_000], ['2026-11-15T09:00:00Z', 14_000], ['2026-11-15T10:00:00Z', 900_000, 'implausible_power'], ['2026-11-15T11:00:00Z', 905_000]]);
    await recomputeAllMonthlyEnergy(svc.deps);
    const novB = await svc.deps.db.selectFrom('energy_months').select(['month', 'wh', 'kwh', 'sessions', 'source', 'status']).where('connection_id', '=', b.connectionId).execute();
    expect(novB).toEqual([{ month: '2026-11', wh: '14333', kwh: '14.33', sessions: 2, source: 'ocpp', status: 'delivered' }]);
    // GET /sessions agrees: kwh is each session's plausible energy, the ERE come from the counted Wh only
    // (fee 20 %, price 0.150): 3,333 Wh × 0.332694 = 1.1089 → 1.11 ERE → × 0.12 = 0.1332 → 0.13;
    // 11,000 Wh → 3.6596 → 3.66 ERE → 0.4392 → 0.44
    const sessions = (await svc.app.inject({ method: 'GET', url: '/sessions', headers: bearer(user.token) })).json().sessions;
    expect(sessions.map((x: Record<string, unknown>) => [x.started_at, x.kwh, x.counts_for_ere, x.ere_credits, x.estimated_euro])).toEqual([
      ['2026-11-15T08:00:00Z', 11, true, 3.66, 0.44],
      ['2026-11-10T10:00:00Z', 8, true, 1.11, 0.13],
    ]);

    // review: delivered → in_review → registered; a delivered month cannot be registered directly
    const direct = await post(`/admin/energy-months/${may}/review`, { action: 'register' });
    expect(direct.statusCode).toBe(409);
    expect(direct.json().error).toBe('invalid_transition');
    for (const id of [may, jun]) {
      expect((await post(`/admin/energy-months/${id}/review`, { action: 'start' })).json().status).toBe('in_review');
    }
    const regMay = await post(`/admin/energy-months/${may}/review`, { action: 'register' });
    expect(regMay.statusCode).toBe(200);
    expect(regMay.json()).toMatchObject({ month: '2026-05', status: 'registered', ere: 99.81 }); // 300 × 0.332694 = 99.8082
    expect((await post(`/admin/energy-months/${jun}/review`, { action: 'register' })).json().ere).toBe(139.9); // 420.50 × 0.332694 = 139.897827
    expect((await post(`/admin/energy-months/${jul}/review`, { action: 'reject', note: 'meter not MID' })).json().status).toBe('rejected');
    const stored = await svc.deps.db.selectFrom('energy_months').select(['month', 'status']).where('connection_id', '=', a.connectionId).orderBy('month').execute();
    expect(stored.map((r) => `${r.month}:${r.status}`)).toEqual(['2026-05:registered', '2026-06:registered', '2026-07:rejected', '2026-10:in_review', '2026-11:delivered']);

    // sales and allocations (fee 20 % from the partner agreement: the account has none of its own)
    const s1 = (await post('/admin/ere/sales', { quarter: '2026-Q3', ere: 1000, price_per_ere: '0.180' })).json();
    const s2 = (await post('/admin/ere/sales', { quarter: '2026-Q4', ere: 500, price_per_ere: 0.2 })).json();
    const s3 = (await post('/admin/ere/sales', { quarter: '2026-Q4', ere: 500, price_per_ere: 0.19 })).json();
    expect(s1).toMatchObject({ quarter: '2026-Q3', ere: 1000, price_per_ere: 0.18, allocated_ere: 0 });
    const al1 = await post(`/admin/ere/sales/${s1.sale_id}/allocations`, { account_id: a.accountId, ere: 100 });
    expect(al1.statusCode).toBe(201);
    expect(al1.json()).toMatchObject({ status: 'reserved', fee_pct: 20, net_eur: 14.4 }); // 100 × 0.180 × 0.80
    const al2 = (await post(`/admin/ere/sales/${s2.sale_id}/allocations`, { account_id: a.accountId, ere: 50 })).json();
    const al3 = (await post(`/admin/ere/sales/${s3.sale_id}/allocations`, { account_id: a.accountId, ere: 30 })).json();
    // registered 239.71 − allocated 180 = 59.71 left: 60 is too much
    const over = await post(`/admin/ere/sales/${s3.sale_id}/allocations`, { account_id: a.accountId, ere: 60 });
    expect(over.statusCode).toBe(409);
    expect(over.json().error).toBe('insufficient_registered_ere');
    expect((await post('/admin/ere/payouts', { account_id: a.accountId })).json().error).toBe('nothing_payable');
    expect((await post(`/admin/ere/allocations/${al1.json().allocation_id}/payable`)).json().status).toBe('payable');
    expect((await post(`/admin/ere/allocations/${al2.allocation_id}/payable`)).json().status).toBe('payable');
    const payout = await post('/admin/ere/payouts', { account_id: a.accountId, reference: 'SEPA-1' });
    expect(payout.statusCode).toBe(201);
    // paid: allocations 1 and 2 → 14.40 + 50 × 0.200 × 0.80 = 8.00 → 22.40 to the customer
    expect(payout.json()).toMatchObject({ paid_to: 'customer', ere: 150, net_eur: 22.4 });
    expect((await post(`/admin/ere/allocations/${al2.allocation_id}/payable`)).json().error).toBe('invalid_transition');
    // a paid allocation stays paid; allocation 3 stays reserved; a fourth one becomes payable
    const s4 = (await post('/admin/ere/sales', { quarter: '2026-Q4', ere: 100, price_per_ere: '0.200' })).json();
    const al4 = (await post(`/admin/ere/sales/${s4.sale_id}/allocations`, { account_id: a.accountId, ere: 20 })).json();
    await post(`/admin/ere/allocations/${al4.allocation_id}/payable`);
    // D143: the same payout posted again (its answer was lost) is the earlier one, not a second payment, nor a 409
    const retry = await post('/admin/ere/payouts', { account_id: a.accountId, reference: 'SEPA-1' });
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual({ ...payout.json(), replayed: true });
    const allocs = await svc.deps.db.selectFrom('ere_allocations').select(['id', 'status', 'ere']).where('account_id', '=', a.accountId).execute();
    expect(Object.fromEntries(allocs.map((x) => [x.id, x.status]))).toEqual({
      [al1.json().allocation_id]: 'paid',
      [al2.allocation_id]: 'paid',
      [al3.allocation_id]: 'reserved',
      [al4.allocation_id]: 'payable',
    });

    const res = await svc.app.inject({ method: 'GET', url: '/ere-position?year=2026', headers: bearer(user.token) });
    expect(res.statusCode).toBe(200);
    // By hand. Factor 0.332694 ERE/kWh; fee 20 %; indicative price 0.150. Today 2026-11-22 (Amsterdam).
    // registered 99.81 + 139.90 = 239.71; allocated 100 (paid) + 50 (paid) + 30 (reserved) + 20 (payable) = 200
    // allocatable 239.71 − 200 = 39.71 ERE = 39.71 / 0.332694 = 119.358… → 119.36 kWh
    // pending (Oct in_review + Nov delivered on both accounts) 250.25 + 80 + 14.33 = 344.58 kWh; its ERE month by
    //   month, as each is booked: 83.2567… → 83.26, 26.6155… → 26.62, 4.7675… → 4.77 = 114.65 ERE (the sum rounded
    //   once would be 114.6397… → 114.64), × 0.150 × 0.80 = 13.758 → 13.76 EUR; sessions 12 + 4 + 2 = 18; ready when
    //   November's review is due: 2026-12-15 00:00 Amsterdam
    // paid 150 ERE: 100 × 0.180 + 50 × 0.200 = 28.00 gross → price 0.18667 → 0.187; net 14.40 + 8.00 = 22.40
    // payable 20 × 0.200 = 4.00 → net 3.20; reserved 30 × 0.190 = 5.70 → net 4.56
    // realized average (28.00 + 4.00 + 5.70) / 200 = 0.1885 → 0.189 (half away from zero)
    // pace: 300 + 420.50 + 250.25 + 80 + 14.33 = 1,065.08 kWh (July rejected) since 2026-05-01: 205 days (not floored, high)
    //   rest of year 2026-11-22 → 2027-01-01 = 40 days: 1,065.08 × 40 / 205 = 207.820… → 207.82 kWh → 69.1404… → 69.14 ERE
    //   → × 0.12 = 8.2968 → 8.30 EUR; whole year at pace 1,065.08 × 365 / 205 = 1,896.36 kWh → 630.9075… → 630.91 ERE → 75.7092 → 75.71 EUR
    // unsold ytd 39.71 + 114.65 = 154.36 ERE → × 0.12 = 18.5232 → 18.52 EUR; unsold total 154.36 + 69.14 = 223.50, 18.52 + 8.30 = 26.82
    // ytd expected = realized nets 22.40 + 3.20 + 4.56 = 30.16, + 18.52 = 48.68; total 48.68 + 8.30 = 56.98
    expect(res.json()).toEqual({
      compliance_year: 2026,
      effective_fee_pct: 20,
      indicative_price_per_ere: 0.15,
      allocatable_ere: 39.71,
      allocatable_kwh: 119.36,
      pending_ere: 114.65,
      pending_kwh: 344.58,
      pending_forecast_net_eur: 13.76,
      pending_sessions: 18,
      pending_ready_at: '2026-12-15T00:00:00+01:00',
      realized_avg_price: 0.189,
      paid: { ere: 150, net_eur: 22.4, price_per_ere: 0.187 },
      payable: { ere: 20, net_eur: 3.2, price_per_ere: 0.2 },
      reserved: { ere: 30, net_eur: 4.56, price_per_ere: 0.19 },
      unsold: { ere: 223.5, forecast_net_eur: 26.82, ytd_ere: 154.36, ytd_forecast_net_eur: 18.52, future_ere: 69.14, future_forecast_net_eur: 8.3 },
      forecast_confidence: 'high',
      forecast_is_projected: true,
      forecast_history_days: 205,
      forecast_rate_floored: false,
      forecast_pace_total_eur: 75.71,
      ytd_expected_eur: 48.68,
      total_expected_eur: 56.98,
      quarters: [
        { quarter: '2026-Q1', ere: 0, sold_ere: 0, price_per_ere: 0 },
        { quarter: '2026-Q2', ere: 239.71, sold_ere: 0, price_per_ere: 0 },
        { quarter: '2026-Q3', ere: 0, sold_ere: 100, price_per_ere: 0.18 },
        // Q4: 50 × 0.200 + 30 × 0.190 + 20 × 0.200 = 19.70 over 100 ERE
        { quarter: '2026-Q4', ere: 0, sold_ere: 100, price_per_ere: 0.197 },
      ],
    });
  });

  it('a short history floors the pace at 30 days; a later year is empty', async () => {
    const user = await aUser(svc.deps);
    const a = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, eligible: true });
    await anEnergyMonth(svc.deps, { connectionId: a.connectionId, month: '2026-11', kwh: '63.00', sessions: 3 });
    const res = (await svc.app.inject({ method: 'GET', url: '/ere-position', headers: bearer(user.token) })).json();
    // 21 days of history (2026-11-01 → 11-22) < 30: rate = 63 / 30 = 2.1 kWh/day; 40 days left → 84 kWh → 27.946296 → 27.95 ERE
    // fee ERE_FEE_PCT 15 % (no account or partner fee): 27.95 × 0.150 × 0.85 = 3.563625 → 3.56
    expect(res).toMatchObject({
      compliance_year: 2026,
      effective_fee_pct: 15,
      forecast_history_days: 21,
      forecast_rate_floored: true,
      forecast_confidence: 'low',
      pending_kwh: 63,
      pending_ere: 20.96, // 63 × 0.332694 = 20.959722
      unsold: { future_ere: 27.95, future_forecast_net_eur: 3.56 },
      // year at pace: 63 × 365 / 30 = 766.50 kWh → 255.009951 → 255.01 ERE → × 0.1275 = 32.513775 → 32.51
      forecast_pace_total_eur: 32.51,
      pending_ready_at: '2026-12-15T00:00:00+01:00',
    });
    const next = (await svc.app.inject({ method: 'GET', url: '/ere-position?year=2027', headers: bearer(user.token) })).json();
    expect(next).toMatchObject({ compliance_year: 2027, pending_kwh: 0, allocatable_ere: 0, forecast_confidence: 'none', forecast_pace_total_eur: null, pending_ready_at: null, forecast_is_projected: false });
  });

  it('allocatable_kwh is the registered kWh to the hundredth while nothing is sold', async () => {
    const user = await aUser(svc.deps);
    const a = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, eligible: true });
    // 182.40 kWh × 0.332694 = 60.6833… → 60.68 ERE booked; 60.68 / 0.332694 = 182.389… would show 182.39
    await anEnergyMonth(svc.deps, { connectionId: a.connectionId, month: '2026-03', kwh: '182.40', status: 'registered', ere: '60.68', sessions: 4 });
    const res = (await svc.app.inject({ method: 'GET', url: '/ere-position', headers: bearer(user.token) })).json();
    expect(res).toMatchObject({ allocatable_ere: 60.68, allocatable_kwh: 182.4 });
  });

  it('a sale or allocation past what its column holds is 400 invalid_request, nothing stored (1e21 has no plain decimal text)', async () => {
    // a binary float's tail is what was meant, not a fourth decimal
    expect((await post('/admin/ere/sales', { quarter: '2027-Q1', ere: 0.30000000000000004, price_per_ere: 0.155 })).statusCode).toBe(201);
    const sale = (await post('/admin/ere/sales', { quarter: '2027-Q1', ere: 10, price_per_ere: 0.2 })).json();
    const a = await anAccountWithConnection(svc.deps, { partnerId: (await aPartner(svc.deps)).partnerId });
    const cases: Array<[string, object, string]> = [
      ['/admin/ere/sales', { quarter: '2027-Q1', ere: 1e21, price_per_ere: 0.2 }, 'ere must be a decimal number'],
      ['/admin/ere/sales', { quarter: '2027-Q1', ere: '1000000000000', price_per_ere: 0.2 }, 'ere must be under 1000000000000.00'],
      ['/admin/ere/sales', { quarter: '2027-Q1', ere: 10, price_per_ere: 1.7e308 }, 'price_per_ere must be a decimal number'],
      ['/admin/ere/sales', { quarter: '2027-Q1', ere: 10, price_per_ere: 10_000_000 }, 'price_per_ere must be under 10000000.000'],
      [`/admin/ere/sales/${sale.sale_id}/allocations`, { account_id: a.accountId, ere: 1e21 }, 'ere must be a decimal number'],
      // D118: more decimals than the column keeps are refused, not rounded (0.1555 was stored as 0.156)
      ['/admin/ere/sales', { quarter: '2027-Q1', ere: 10, price_per_ere: 0.1555 }, 'price_per_ere has at most 3 decimals'],
      ['/admin/ere/sales', { quarter: '2027-Q1', ere: '10.005', price_per_ere: 0.2 }, 'ere has at most 2 decimals'],
      [`/admin/ere/sales/${sale.sale_id}/allocations`, { account_id: a.accountId, ere: 1.005 }, 'ere has at most 2 decimals'],
    ];
    const before = await svc.deps.db.selectFrom('ere_sales').select(['id']).execute();
    for (const [url, body, detail] of cases) {
      const res = await post(url, body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_request', detail });
    }
    expect(await svc.deps.db.selectFrom('ere_sales').select(['id']).execute()).toHaveLength(before.length);
    expect(await svc.deps.db.selectFrom('ere_allocations').select(['id']).where('sale_id', '=', sale.sale_id).execute()).toEqual([]);
  });

  it('refuses a year before 2026 or not a number with 400 invalid_request, and needs chargers:read', async () => {
    const user = await aUser(svc.deps);
    for (const q of ['year=2025', 'year=abc', 'year=2026.5']) {
      const res = await svc.app.inject({ method: 'GET', url: `/ere-position?${q}`, headers: bearer(user.token) });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
    const noScope = await aUser(svc.deps, { scopes: ['chargers:write'] });
    const res = await svc.app.inject({ method: 'GET', url: '/ere-position', headers: bearer(noScope.token) });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'Insufficient scope', required_scope: 'chargers:read' });
  });
});
