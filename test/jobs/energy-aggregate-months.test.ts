// meter_readings keeps every month (D24), and the aggregation runs every 15 minutes: an incremental run reads only
// the months it recomputes. Which sessions changed, and which months their readings span, it learns from the session
// rows (updated_at, first_reading_at, last_reading_at); their readings it looks up bounded by that span. A partition
// a statement was planned over stays locked until the transaction ends, so the locks tell which months a run read.
// The owner's session list reads its sessions' signed readings the same way.
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addHistoryMonths } from '../../bench/history.ts';
import { joinTransaction } from '../../src/db/join-transaction.ts';
import { listSessionItems } from '../../src/domain/charging/personal-views.ts';
import { aggregateMonthlyEnergy, recomputeAllMonthlyEnergy } from '../../src/domain/energy/aggregate.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { aLateReading, anAccountWithConnection, aSession } from '../helpers/energy-factories.ts';
import { anOcppCharger } from '../helpers/ocpp-factories.ts';
import { lockedReadingPartitions } from '../helpers/partitions.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService();
  // 36 months of history before the partitions the migrations made
  expect(await addHistoryMonths(svc.deps.db, 36)).toBeGreaterThanOrEqual(40);
});
afterAll(async () => {
  await svc?.close();
});

const iso = (ms: number) => new Date(ms).toISOString();

/** The partitions that hold a session's readings. */
const partitionsOf = (sessionId: string) =>
  sql<{ relname: string }>`select distinct tableoid::regclass::text as relname from meter_readings where session_id = ${sessionId} order by 1`
    .execute(svc.deps.db)
    .then((r) => r.rows.map((x) => x.relname));

/** An incremental run (margin 0: nothing is in flight between runs here), and the partitions it locked. */
async function incrementalRun() {
  return svc.deps.db.transaction().execute(async (trx) => {
    const summary = await aggregateMonthlyEnergy({ ...svc.deps, db: joinTransaction(trx) }, { safetyMarginSeconds: 0 });
    return { summary, locked: await lockedReadingPartitions(trx) };
  });
}

const monthsOf = (connectionId: string) =>
  svc.deps.db.selectFrom('energy_months').select(['month', 'wh', 'sessions']).where('connection_id', '=', connectionId).orderBy('month').execute();

it('an incremental run plans and locks only the months of the sessions that changed, whatever the history', { timeout: 60_000 }, async () => {
  const a = await anAccountWithConnection(svc.deps, { eligible: true }); // signed on 2026-01-01
  // a session of February 2026 (in a history partition) and one of two hours ago
  const old = await aSession(svc.deps, a.midChargerId!, [['2026-02-10T08:00:00Z', 10_000], ['2026-02-10T09:00:00Z', 13_000]]);
  const t = Date.now() - 2 * 3_600_000;
  await aSession(svc.deps, a.midChargerId!, [[iso(t), 20_000], [iso(t + 1_800_000), 22_000]]);
  await aggregateMonthlyEnergy(svc.deps, { full: true, safetyMarginSeconds: 0 });
  expect((await monthsOf(a.connectionId)).find((m) => m.month === '2026-02')).toMatchObject({ wh: '3000', sessions: 1 });

  // nothing changed: no month of readings is read at all
  const idle = await incrementalRun();
  expect(idle.summary).toMatchObject({ mode: 'incremental', months_recomputed: 0 });
  expect(idle.locked).toEqual([]);

  // a new session: only the months its readings lie in
  const fresh = await aSession(svc.deps, a.midChargerId!, [[iso(t + 3_600_000), 22_000], [iso(t + 5_400_000), 23_500]]);
  const second = await incrementalRun();
  expect(second.summary).toMatchObject({ mode: 'incremental', updated: 1 });
  expect(second.locked).toEqual(await partitionsOf(fresh));
  expect(second.locked.length).toBeLessThanOrEqual(2);

  // a late reading of February (an offline batch): February's partition, and no other month
  await aLateReading(svc.deps, a.midChargerId!, old, '2026-02-10T10:00:00Z', 14_000);
  const third = await incrementalRun();
  expect(third.summary).toMatchObject({ mode: 'incremental', months_recomputed: 1, updated: 1 });
  expect(third.locked).toEqual(['meter_readings_2026_02']);
  expect((await monthsOf(a.connectionId)).find((m) => m.month === '2026-02')).toMatchObject({ wh: '4000', sessions: 1 });

  // and the incremental result is the full recompute's
  expect(await recomputeAllMonthlyEnergy(svc.deps)).toMatchObject({ mode: 'full', created: 0, updated: 0 });
});

it('the owner’s session list reads the signed readings of the sessions listed in their own months only', { timeout: 60_000 }, async () => {
  const owner = await aUser(svc.deps);
  const ch = await anOcppCharger(svc, owner);
  const t = Date.now() - 3_600_000;
  const s = await aSession(svc.deps, ch.chargerId, [[iso(t), 5_000], [iso(t + 600_000), 5_400]]);
  const { items, locked } = await svc.deps.db.transaction().execute(async (trx) => {
    const list = await listSessionItems({ ...svc.deps, db: joinTransaction(trx) }, owner.userId, { limit: 10, offset: 0, charger_id: ch.chargerId });
    return { items: list.sessions, locked: await lockedReadingPartitions(trx) };
  });
  expect(items.map((i) => [i.id, i.kwh])).toEqual([[s, 0.4]]);
  expect(locked).toEqual(await partitionsOf(s));
});
