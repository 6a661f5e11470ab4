// C4.7 / D78: a run of the aggregation commits as it goes, a few connections per transaction, under an advisory lock
// held for the whole run, and writes its watermark last. What another connection of the pool sees between two of
// its transactions is what those transactions wrote; a second run meanwhile is skipped; a run that fails part-way
// keeps the old watermark, and the next run ends where a run without the failure would have ended.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateMonthlyEnergy, recomputeAllMonthlyEnergy } from '../../src/domain/energy/aggregate.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock, type TestClock } from '../helpers/clock.ts';
import { anAccountWithConnection, aSession } from '../helpers/energy-factories.ts';

let svc: TestService;
let clock: TestClock;

beforeAll(async () => {
  clock = testClock('2026-11-22T10:00:00Z');
  svc = await createTestService({ clock });
});
afterAll(() => svc.close());

/** n connections with a MID charger and one October session each, in connection id order (the run's order) */
async function connections(n: number, day: string): Promise<Array<{ connectionId: string; chargerId: string }>> {
  const out: Array<{ connectionId: string; chargerId: string }> = [];
  for (let i = 0; i < n; i++) {
    const a = await anAccountWithConnection(svc.deps, { eligible: true });
    await aSession(svc.deps, a.midChargerId!, [[`2026-10-${day}T08:00:00Z`, 0], [`2026-10-${day}T09:00:00Z`, 1_000 * (i + 1)]]);
    out.push({ connectionId: a.connectionId, chargerId: a.midChargerId! });
  }
  return out.sort((x, y) => x.connectionId.localeCompare(y.connectionId));
}

/** of these connections, those with a month written (read through the pool, outside any run's transaction) */
const written = async (ids: string[]) =>
  (await svc.deps.db.selectFrom('energy_months').select('connection_id').distinct().where('connection_id', 'in', ids).execute()).map((r) => r.connection_id).sort();

const watermark = async () => (await svc.deps.db.selectFrom('energy_aggregate_watermark').select(['since']).where('id', '=', 1).executeTakeFirst())?.since ?? null;

const figures = (ids: string[]) =>
  svc.deps.db.selectFrom('energy_months').select(['connection_id', 'month', 'wh', 'sessions', 'source']).where('connection_id', 'in', ids).orderBy('connection_id').orderBy('month').execute();

describe('energy-aggregate commits as it goes', () => {
  it('writes its connections a few per transaction, visible at once; a second run meanwhile is skipped; the watermark comes last', async () => {
    const conns = await connections(5, '03');
    const ids = conns.map((c) => c.connectionId);
    expect(await watermark()).toBeNull(); // the first run of this database: a full one

    const seen: Array<{ done: number; of: number; visible: string[]; watermark: Date | null; second: string | undefined }> = [];
    clock.advance(60_000);
    const summary = await aggregateMonthlyEnergy(svc.deps, {
      safetyMarginSeconds: 0,
      chunkConnections: 2,
      onChunk: async (done, of) => {
        const second = await aggregateMonthlyEnergy(svc.deps, { safetyMarginSeconds: 0 });
        seen.push({ done, of, visible: await written(ids), watermark: await watermark(), second: second.skipped });
      },
    });
    expect(summary).toMatchObject({ mode: 'full', connections: 5, created: 5 });
    expect(seen).toEqual([
      { done: 2, of: 5, visible: ids.slice(0, 2), watermark: null, second: 'locked' },
      { done: 4, of: 5, visible: ids.slice(0, 4), watermark: null, second: 'locked' },
      { done: 5, of: 5, visible: ids, watermark: null, second: 'locked' },
    ]);
    expect(await watermark()).not.toBeNull();
    // the lock is released: the next run runs (nothing changed: nothing to do)
    clock.advance(60_000);
    expect(await aggregateMonthlyEnergy(svc.deps, { safetyMarginSeconds: 0 })).toMatchObject({ mode: 'incremental', months_recomputed: 0, created: 0, updated: 0 });
  });

  it('a run that fails part-way keeps the old watermark; the next run ends where one run without the failure ends', async () => {
    const conns = await connections(3, '05');
    const ids = conns.map((c) => c.connectionId);
    clock.advance(60_000);
    await aggregateMonthlyEnergy(svc.deps, { safetyMarginSeconds: 0 });
    const before = await watermark();
    expect(await written(ids)).toEqual(ids);

    // a second session for each connection; the run dies after its first transaction (one connection) committed
    for (const [i, c] of conns.entries()) await aSession(svc.deps, c.chargerId, [['2026-10-20T08:00:00Z', 50_000], ['2026-10-20T09:00:00Z', 50_000 + 100 * (i + 1)]]);
    clock.advance(60_000);
    const failed = aggregateMonthlyEnergy(svc.deps, {
      safetyMarginSeconds: 0,
      chunkConnections: 1,
      onChunk: (done) => {
        if (done === 1) throw new Error('the process died here');
      },
    });
    await expect(failed).rejects.toThrow('the process died here');
    expect(await watermark()).toEqual(before);
    const afterFailure = await figures(ids);
    expect(afterFailure.map((r) => [r.connection_id, r.sessions])).toEqual([[ids[0], 2], [ids[1], 1], [ids[2], 1]]);

    // the next run recomputes from the old watermark: the committed connection is unchanged, the others updated
    clock.advance(60_000);
    expect(await aggregateMonthlyEnergy(svc.deps, { safetyMarginSeconds: 0 })).toMatchObject({ mode: 'incremental', months_recomputed: 3, unchanged: 1, updated: 2 });
    const incremental = await figures(ids);
    expect(incremental.map((r) => [r.connection_id, r.sessions])).toEqual(ids.map((id) => [id, 2]));
    expect(await watermark()).not.toEqual(before);
    // and that is what a full recompute gives
    expect(await recomputeAllMonthlyEnergy(svc.deps)).toMatchObject({ created: 0, updated: 0 });
    expect(await figures(ids)).toEqual(incremental);
  });
});
