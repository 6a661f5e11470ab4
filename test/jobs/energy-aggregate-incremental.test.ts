// C4.7 incremental aggregation: after the first (full) run only the (connection, month) pairs whose inputs
// changed are recomputed; late readings of old months, chargers that stop being MID or move accounts, and months
// that were in the future are picked up; the result always equals a full recompute on the same data.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateMonthlyEnergy, recomputeAllMonthlyEnergy } from '../../src/domain/energy/aggregate.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { testClock, type TestClock } from '../helpers/clock.ts';
import { bearer } from '../helpers/factories.ts';
import { aCharger, aLateReading, anAccountWithConnection, aSession } from '../helpers/energy-factories.ts';

let svc: TestService;
let clock: TestClock;

beforeAll(async () => {
  clock = testClock('2026-11-22T10:00:00Z');
  svc = await createTestService({ clock });
});
afterAll(() => svc.close());

// margin 0: in a test nothing is in flight between runs, so a run sees exactly what changed since the last one
// the clock moves a minute per run: a row the run writes gets a new updated_at (the write path stamps the clock)
const run = () => {
  clock.advance(60_000);
  return aggregateMonthlyEnergy(svc.deps, { safetyMarginSeconds: 0 });
};

const rowsOf = (connectionIds: string[]) =>
  svc.deps.db
    .selectFrom('energy_months')
    .select(['connection_id', 'month', 'kwh', 'wh', 'sessions', 'source', 'status', 'updated_at'])
    .where('connection_id', 'in', connectionIds)
    .orderBy('connection_id')
    .orderBy('month')
    .execute();
const figures = (rows: Awaited<ReturnType<typeof rowsOf>>) => rows.map(({ updated_at: _u, ...r }) => r);

describe('energy-aggregate, incremental', () => {
  it('recomputes only what changed since the watermark and ends where a full recompute ends', async () => {
    const a = await anAccountWithConnection(svc.deps, { eligible: true });
    const b = await anAccountWithConnection(svc.deps, { eligible: true });
    const sA = await aSession(svc.deps, a.midChargerId!, [['2026-05-10T08:00:00Z', 0], ['2026-05-10T10:00:00Z', 5_000]]);
    await aSession(svc.deps, a.midChargerId!, [['2026-10-03T08:00:00Z', 5_000], ['2026-10-03T09:00:00Z', 6_000]]);
    await aSession(svc.deps, b.midChargerId!, [['2026-10-04T08:00:00Z', 0], ['2026-10-04T09:00:00Z', 2_000]]);

    const first = await run();
    expect(first).toMatchObject({ mode: 'full', created: 3, updated: 0 });
    const before = await rowsOf([a.connectionId, b.connectionId]);
    expect(before).toHaveLength(3);

    // nothing changed: nothing recomputed, nothing written
    const idle = await run();
    expect(idle).toMatchObject({ mode: 'incremental', months_recomputed: 0, connections_full: 0, created: 0, updated: 0, unchanged: 0 });
    expect(await rowsOf([a.connectionId, b.connectionId])).toEqual(before);

    // one new session in A's October: only that pair is recomputed and only that row changes
    await aSession(svc.deps, a.midChargerId!, [['2026-10-20T08:00:00Z', 6_000], ['2026-10-20T09:00:00Z', 9_500]]);
    const second = await run();
    expect(second).toMatchObject({ mode: 'incremental', months_recomputed: 1, connections_full: 0, created: 0, updated: 1, unchanged: 0 });
    const after = await rowsOf([a.connectionId, b.connectionId]);
    const key = (r: { connection_id: string; month: string }) => `${r.connection_id}/${r.month}`;
    const changed = after.filter((r) => before.find((x) => key(x) === key(r))!.updated_at.getTime() !== r.updated_at.getTime());
    expect(changed.map((r) => [r.connection_id, r.month, r.kwh, r.sessions])).toEqual([[a.connectionId, '2026-10', '4.50', 2]]);

    // a reading of May arrives late (an offline batch): May is picked up
    await aLateReading(svc.deps, a.midChargerId!, sA, '2026-05-10T11:00:00Z', 5_750);
    const third = await run();
    expect(third).toMatchObject({ months_recomputed: 1, updated: 1 });
    expect((await rowsOf([a.connectionId])).map((r) => [r.month, r.kwh])).toEqual([['2026-05', '5.75'], ['2026-10', '4.50']]);

    // a late reading stamped exactly across a month end: both months recomputed, split as before
    await aLateReading(svc.deps, a.midChargerId!, sA, '2026-06-01T00:00:00Z', 5_750 + 5_000); // from 11:00Z May 10: 504 h later
    const fourth = await run();
    expect(fourth).toMatchObject({ months_recomputed: 2 });

    // the incremental result is exactly the full recompute's: a full run changes nothing
    const incremental = figures(await rowsOf([a.connectionId, b.connectionId]));
    const full = await recomputeAllMonthlyEnergy(svc.deps);
    expect(full).toMatchObject({ mode: 'full', created: 0, updated: 0 });
    expect(figures(await rowsOf([a.connectionId, b.connectionId]))).toEqual(incremental);
    // May 10 11:00Z → June 1 00:00Z (= 2026-05-31T22:00Z Amsterdam midnight, 515 h): 5,000 × 515/517 in May
    expect(incremental.filter((r) => r.connection_id === a.connectionId).map((r) => [r.month, r.wh])).toEqual([
      ['2026-05', String(5_750 + 4_981)],
      ['2026-06', '19'],
      ['2026-10', '4500'],
    ]);
  });

  it('a charger that stops being MID, or moves to another account, is recomputed over its whole history', async () => {
    const a = await anAccountWithConnection(svc.deps, { eligible: true });
    const b = await anAccountWithConnection(svc.deps, { eligible: true });
    const moving = await aCharger(svc.deps, { accountId: a.accountId, mid: true });
    await aSession(svc.deps, a.midChargerId!, [['2026-07-01T08:00:00Z', 0], ['2026-07-01T09:00:00Z', 1_000]]);
    await aSession(svc.deps, moving, [['2026-08-01T08:00:00Z', 0], ['2026-08-01T09:00:00Z', 3_000]]);
    await run();
    expect((await rowsOf([a.connectionId])).map((r) => [r.month, r.kwh])).toEqual([['2026-07', '1.00'], ['2026-08', '3.00']]);

    // the charger moves to B's account (no session or reading changes): A's August falls to 0, B gains it
    await svc.deps.db.updateTable('chargers').set({ account_id: b.accountId }).where('id', '=', moving).execute();
    const moved = await run();
    expect(moved).toMatchObject({ mode: 'incremental', connections_full: 2 });
    expect((await rowsOf([a.connectionId])).map((r) => [r.month, r.kwh])).toEqual([['2026-07', '1.00'], ['2026-08', '0.00']]);
    expect((await rowsOf([b.connectionId])).map((r) => [r.month, r.kwh])).toEqual([['2026-08', '3.00']]);

    // A's own charger stops being MID: its months fall to 0 (ocpp rows)
    await svc.deps.db.updateTable('chargers').set({ mid_certified: false }).where('id', '=', a.midChargerId!).execute();
    expect(await run()).toMatchObject({ connections_full: 1, updated: 1 });
    expect((await rowsOf([a.connectionId])).map((r) => [r.month, r.kwh])).toEqual([['2026-07', '0.00'], ['2026-08', '0.00']]);

    // and a full recompute agrees
    const snapshot = figures(await rowsOf([a.connectionId, b.connectionId]));
    expect(await recomputeAllMonthlyEnergy(svc.deps)).toMatchObject({ created: 0, updated: 0 });
    expect(figures(await rowsOf([a.connectionId, b.connectionId]))).toEqual(snapshot);
  });

  it('a month that lay in the future is written once it arrives, without new data; registered months stay', async () => {
    const a = await anAccountWithConnection(svc.deps, { eligible: true });
    // a charger clock ahead: readings stamped in December while it is November
    const s = await aSession(svc.deps, a.midChargerId!, [['2026-11-30T22:00:00Z', 0], ['2026-12-01T01:00:00Z', 3_000]]);
    await run();
    expect((await rowsOf([a.connectionId])).map((r) => [r.month, r.wh])).toEqual([['2026-11', '1000']]);
    await svc.deps.db.updateTable('energy_months').set({ status: 'registered' }).where('connection_id', '=', a.connectionId).execute();

    clock.set('2026-12-02T10:00:00Z');
    try {
      const r = await run();
      expect(r).toMatchObject({ mode: 'incremental', created: 1 });
      expect((await rowsOf([a.connectionId])).map((x) => [x.month, x.wh, x.status])).toEqual([
        ['2026-11', '1000', 'registered'],
        ['2026-12', '2000', 'delivered'],
      ]);
      // more November energy arrives late: November is registered and stays
      await aLateReading(svc.deps, a.midChargerId!, s, '2026-11-30T23:00:00Z', 900);
      const late = await run();
      expect(late).toMatchObject({ registered_left_alone: 1, updated: 1 });
      expect((await rowsOf([a.connectionId])).map((x) => [x.month, x.wh, x.status])).toEqual([
        ['2026-11', '1000', 'registered'],
        ['2026-12', '2100', 'delivered'], // the step 900 → 3,000 from 23:00Z (December's start) on
      ]);
    } finally {
      clock.set('2026-11-22T10:00:00Z');
    }
  });

  it('runs incrementally through the admin endpoint (watermark stored with the results)', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/admin/jobs/energy-aggregate/run', headers: bearer(TEST_ADMIN_TOKEN) });
    expect(res.statusCode).toBe(200);
    expect(res.json().result).toMatchObject({ mode: 'incremental', created: 0, updated: 0 });
    const wm = await svc.deps.db.selectFrom('energy_aggregate_watermark').selectAll().executeTakeFirstOrThrow();
    expect(wm.now_month).toBe('2026-11');
  });
});
