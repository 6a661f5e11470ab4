// C4.7 the OCPP monthly aggregation: MID chargers only, sessions split at Amsterdam month boundaries by the
// interpolated register (DST included), anomalies held out, registered months never changed, re-runs change
// nothing, and the same sessions as a CPO batch give identical monthly totals.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundledCatalog } from '../../src/domain/catalog/load.ts';
import { aggregateMonthlyEnergy } from '../../src/domain/energy/aggregate.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, aUser, bearer } from '../helpers/factories.ts';
import { aCharger, anAccountWithConnection, anEnergyMonth, aSession } from '../helpers/energy-factories.ts';
import { anOcppCharger, connectCharger, energyValue } from '../helpers/ocpp-factories.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await createTestService({ clock: testClock('2026-11-22T10:00:00Z'), listen: true });
  await loadBundledCatalog(svc.deps.db);
});
afterAll(() => svc.close());

const runJob = async () => {
  const res = await svc.app.inject({ method: 'POST', url: '/admin/jobs/energy-aggregate/run', headers: bearer(TEST_ADMIN_TOKEN) });
  expect(res.statusCode).toBe(200);
  return res.json().result as Record<string, number>;
};

const monthsOf = (connectionId: string) =>
  svc.deps.db
    .selectFrom('energy_months')
    .select(['month', 'kwh', 'wh', 'sessions', 'source', 'status', 'updated_at'])
    .where('connection_id', '=', connectionId)
    .orderBy('month')
    .execute();

describe('energy-aggregate', () => {
  it('counts MID chargers only, splits across month ends in Amsterdam time (both DST seasons), holds out anomalies; re-runs change nothing', async () => {
    const a = await anAccountWithConnection(svc.deps, { eligible: true });
    const mid = a.midChargerId!;
    const nonMid = await aCharger(svc.deps, { accountId: a.accountId, mid: false });
    // across midnight 2026-10-31 → 11-01 (UTC+1): boundary 23:00Z; step 103,000 → 112,001 over 3 h → 106,000 at the boundary
    await aSession(svc.deps, mid, [['2026-10-31T21:00:00Z', 100_000], ['2026-10-31T22:00:00Z', 103_000], ['2026-11-01T01:00:00Z', 112_001]]);
    // across midnight 2026-03-31 → 04-01 (UTC+2): boundary 22:00Z halfway; 5,000 + 6,001/2 = 8,000.5 → 8,001
    await aSession(svc.deps, mid, [['2026-03-31T20:30:00Z', 5_000], ['2026-03-31T23:30:00Z', 11_001]]);
    // October session with an implausible step (flagged by the gateway): 4,000 + 2,000 Wh count
    await aSession(svc.deps, mid, [
      ['2026-10-10T10:00:00Z', 200_000],
      ['2026-10-10T11:00:00Z', 204_000],
      ['2026-10-10T12:00:00Z', 900_000, 'implausible_power'],
      ['2026-10-10T13:00:00Z', 902_000],
    ]);
    // a non-MID charger of the same account never counts
    await aSession(svc.deps, nonMid, [['2026-10-12T10:00:00Z', 0], ['2026-10-12T15:00:00Z', 50_000]]);

    const first = await runJob();
    expect(first).toMatchObject({ created: 4, updated: 0, unchanged: 0, rejected: 0 });
    const rows = await monthsOf(a.connectionId);
    expect(rows.map(({ updated_at: _u, ...r }) => r)).toEqual([
      { month: '2026-03', kwh: '3.00', wh: '3001', sessions: 1, source: 'ocpp', status: 'delivered' },
      { month: '2026-04', kwh: '3.00', wh: '3000', sessions: 0, source: 'ocpp', status: 'delivered' },
      // 6,000 (Oct 31 part) + 6,000 (Oct 10 session without the flagged step)
      { month: '2026-10', kwh: '12.00', wh: '12000', sessions: 2, source: 'ocpp', status: 'delivered' },
      { month: '2026-11', kwh: '6.00', wh: '6001', sessions: 0, source: 'ocpp', status: 'delivered' },
    ]);

    const again = await runJob();
    expect(again).toMatchObject({ created: 0, updated: 0, unchanged: 4 });
    expect(await monthsOf(a.connectionId)).toEqual(rows);
  });

  it('leaves a registered month alone (batch ere_booked too) while other months follow new sessions', async () => {
    const cpo = await aPartner(svc.deps);
    const a = await anAccountWithConnection(svc.deps, { eligible: true, partnerId: cpo.partnerId });
    await aSession(svc.deps, a.midChargerId!, [['2026-09-05T08:00:00Z', 0], ['2026-09-05T10:00:00Z', 7_000]]);
    await aggregateMonthlyEnergy(svc.deps);
    const reg = await svc.app.inject({
      method: 'POST',
      url: `/sandbox/connections/${a.connectionId}/register-ere`,
      headers: bearer(await cpo.cpoToken()),
      payload: { month: '2026-09' },
    });
    expect(reg.statusCode).toBe(200);
    expect(reg.json().energy_month).toMatchObject({ month: '2026-09', kwh: 7, status: 'registered', ere: 2.33 }); // 7 × 0.332694 = 2.328858

    // more September energy arrives late (offline queue), and an October session
    await aSession(svc.deps, a.midChargerId!, [['2026-09-20T08:00:00Z', 7_000], ['2026-09-20T09:00:00Z', 9_500]]);
    await aSession(svc.deps, a.midChargerId!, [['2026-10-02T08:00:00Z', 9_500], ['2026-10-02T09:00:00Z', 10_000]]);
    const r = await aggregateMonthlyEnergy(svc.deps);
    expect(r.registered_left_alone).toBeGreaterThanOrEqual(1);
    const rows = await monthsOf(a.connectionId);
    expect(rows.map((x) => [x.month, x.kwh, x.status])).toEqual([
      ['2026-09', '7.00', 'registered'],
      ['2026-10', '0.50', 'delivered'],
    ]);

    const batch = await svc.app.inject({
      method: 'POST',
      url: '/v1/sessions:batch',
      headers: bearer(await cpo.cpoToken()),
      payload: { items: [{ connection_id: a.connectionId, month: '2026-09', kwh: 9.5 }, { connection_id: a.connectionId, month: '2026-09', kwh: 7 }] },
    });
    expect(batch.json().results.map((x: { status: string; error?: string }) => x.error ?? x.status)).toEqual(['ere_booked', 'unchanged']);

    // spec §4.1 rule 3: connections:update answers 409 ere_booked, also for an unchanged body
    const upd = await svc.app.inject({
      method: 'POST',
      url: '/v1/connections:update',
      headers: bearer(await cpo.cpoToken()),
      payload: { connection_id: a.connectionId },
    });
    expect(upd.statusCode).toBe(409);
    expect(upd.json().error).toBe('ere_booked');
  });

  it('leaves a month the CPO delivered to the CPO', async () => {
    const cpo = await aPartner(svc.deps);
    const a = await anAccountWithConnection(svc.deps, { eligible: true, partnerId: cpo.partnerId });
    const batch = await svc.app.inject({
      method: 'POST',
      url: '/v1/sessions:batch',
      headers: bearer(await cpo.cpoToken()),
      payload: { items: [{ connection_id: a.connectionId, month: '2026-07', kwh: 9.99 }] },
    });
    expect(batch.json().counts.created).toBe(1);
    await aSession(svc.deps, a.midChargerId!, [['2026-07-05T08:00:00Z', 0], ['2026-07-05T10:00:00Z', 2_000]]);
    await aSession(svc.deps, a.midChargerId!, [['2026-06-05T08:00:00Z', 2_000], ['2026-06-05T10:00:00Z', 3_000]]);
    const r = await aggregateMonthlyEnergy(svc.deps);
    expect(r.cpo_left_alone).toBeGreaterThanOrEqual(1);
    expect((await monthsOf(a.connectionId)).map((x) => [x.month, x.kwh, x.source])).toEqual([
      ['2026-06', '1.00', 'ocpp'],
      ['2026-07', '9.99', 'cpo'],
    ]);
  });

  it('two runs at once write each month once', async () => {
    const a = await anAccountWithConnection(svc.deps, { eligible: true });
    await aSession(svc.deps, a.midChargerId!, [['2026-08-05T08:00:00Z', 0], ['2026-08-05T10:00:00Z', 4_321]]);
    const [r1, r2] = await Promise.all([aggregateMonthlyEnergy(svc.deps), aggregateMonthlyEnergy(svc.deps)]);
    // on PostgreSQL the second finds the lock taken; on PGlite the runs queue and the second changes nothing
    const created = [r1, r2].reduce((n, r) => n + r.created, 0);
    expect(created).toBe(1);
    expect((await monthsOf(a.connectionId)).map((x) => [x.month, x.kwh])).toEqual([['2026-08', '4.32']]);
  });

  it('the same sessions through a real OCPP 1.6 charger and as a CPO batch give identical monthly totals', async () => {
    const user = await aUser(svc.deps);
    const cpo = await aPartner(svc.deps);
    // signed (machtiging in force since 2026-01-01): energy counts from that moment on (C5.4)
    const viaOcpp = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, eligible: true });
    const viaCpo = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId });
    const ch = await anOcppCharger(svc, user, { accountId: viaOcpp.accountId });
    const cli = await connectCharger(svc, ch, 'ocpp1.6'); // a MID model of the catalog: mid_certified
    try {
      // one session across the Amsterdam midnight of 2026-10-31 → 11-01, one in the spring across 03-31 → 04-01
      const s1 = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG-1', meterStart: 100_000, timestamp: '2026-10-31T21:00:00Z' })) as { transactionId: number };
      await cli.call('MeterValues', { connectorId: 1, transactionId: s1.transactionId, meterValue: [energyValue('ocpp1.6', '2026-10-31T22:00:00Z', 103_000)] });
      await cli.call('StopTransaction', { transactionId: s1.transactionId, meterStop: 112_001, timestamp: '2026-11-01T01:00:00Z', idTag: 'TAG-1' });
      const s2 = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG-1', meterStart: 200_000, timestamp: '2026-03-31T20:30:00Z' })) as { transactionId: number };
      await cli.call('StopTransaction', { transactionId: s2.transactionId, meterStop: 206_001, timestamp: '2026-03-31T23:30:00Z', idTag: 'TAG-1' });
    } finally {
      await cli.close({ force: true });
    }
    await runJob();
    // the CPO computed its own monthly totals from the same meter data (Wh → kWh)
    const batch = await svc.app.inject({
      method: 'POST',
      url: '/v1/sessions:batch',
      headers: bearer(await cpo.cpoToken()),
      payload: {
        items: [
          { connection_id: viaCpo.connectionId, month: '2026-03', kwh: 3.001 },
          { connection_id: viaCpo.connectionId, month: '2026-04', kwh: 3.0 },
          { connection_id: viaCpo.connectionId, month: '2026-10', kwh: 6.0 },
          { connection_id: viaCpo.connectionId, month: '2026-11', kwh: 6.001 },
        ],
      },
    });
    expect(batch.json().counts.created).toBe(4);
    const ocppRows = (await monthsOf(viaOcpp.connectionId)).map((r) => [r.month, r.kwh]);
    const cpoRows = (await monthsOf(viaCpo.connectionId)).map((r) => [r.month, r.kwh]);
    expect(ocppRows).toEqual([
      ['2026-03', '3.00'],
      ['2026-04', '3.00'],
      ['2026-10', '6.00'],
      ['2026-11', '6.00'],
    ]);
    expect(cpoRows).toEqual(ocppRows);
  });

  it('holds the excess of an open month above its capacity that was written without a hold (stored before holds existed, D113)', async () => {
    const cpo = await aPartner(svc.deps);
    const acc = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId, eligible: true });
    // as a version before the capacity hold stored them: a CPO's 12,800 kWh September (720 h × 17.3 kW = 12,456 kWh)
    const sept = await anEnergyMonth(svc.deps, { connectionId: acc.connectionId, month: '2026-09', kwh: '12800.00' });
    const oct = await anEnergyMonth(svc.deps, { connectionId: acc.connectionId, month: '2026-10', kwh: '300.00', status: 'in_review' });
    const r = await aggregateMonthlyEnergy(svc.deps);
    expect(r.held_over_capacity).toBe(1);
    const row = await svc.deps.db.selectFrom('energy_months').selectAll().where('id', '=', sept).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ kwh: '12456.00', held_wh: '344000', hold_reason: 'connection_capacity', hold_status: 'held', status: 'delivered' });
    expect(await svc.deps.db.selectFrom('energy_months').select(['kwh', 'hold_status', 'status']).where('id', '=', oct).executeTakeFirstOrThrow()).toEqual({ kwh: '300.00', hold_status: null, status: 'in_review' });
    // not registered before an operator decides, as a month held on its delivery
    const review = (action: string) => svc.app.inject({ method: 'POST', url: `/admin/energy-months/${sept}/review`, headers: bearer(TEST_ADMIN_TOKEN), payload: { action } });
    await review('start');
    const reg = await review('register');
    expect(reg.statusCode).toBe(409);
    expect(reg.json().error).toBe('energy_held');
    // the next run finds nothing more to do; a re-delivery of the same 12,800 kWh stays unchanged
    expect((await aggregateMonthlyEnergy(svc.deps)).held_over_capacity).toBe(0);
    const again = await svc.app.inject({ method: 'POST', url: '/v1/sessions:batch', headers: bearer(await cpo.cpoToken()), payload: { items: [{ connection_id: acc.connectionId, month: '2026-09', kwh: 12800 }] } });
    expect(again.json().results[0].status).toBe('unchanged');
  });
});
