// GET /chargers shows each charger's latest register reading. meter_readings keeps every month (D24, D74): the
// lookup goes to the recent months first, so that the owner's list (polled often, and re-read by the live stream on
// every change) is planned over those partitions and not over every month kept; a charger whose latest reading is
// older is looked up again over all of them, so the answer is the same.
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addHistoryMonths } from '../../bench/history.ts';
import { joinTransaction } from '../../src/db/join-transaction.ts';
import { listChargerItems } from '../../src/domain/charging/personal-views.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { anOcppCharger } from '../helpers/ocpp-factories.ts';
import { lockedReadingPartitions } from '../helpers/partitions.ts';
import { monthPartition } from '../../src/jobs/partitions.job.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService();
  expect(await addHistoryMonths(svc.deps.db, 36)).toBeGreaterThanOrEqual(40);
});
afterAll(async () => {
  await svc?.close();
});

const reading = (chargerId: string, at: Date, wh: number) =>
  sql`insert into meter_readings (charger_id, connector_id, measured_at, measurand, phase, wh)
      values (${chargerId}, 1, ${at}, 'Energy.Active.Import.Register', '', ${wh})`.execute(svc.deps.db);

it('shows the latest reading of a charger in use and of one last read two years ago, and none for one never read', async () => {
  const owner = await aUser(svc.deps);
  const inUse = await anOcppCharger(svc, owner, { nickname: 'in use' });
  const idle = await anOcppCharger(svc, owner, { nickname: 'idle' });
  const never = await anOcppCharger(svc, owner, { nickname: 'never' });
  const now = Date.now();
  await reading(inUse.chargerId, new Date(now - 3 * 86_400_000), 4_000);
  await reading(inUse.chargerId, new Date(now - 3_600_000), 5_000);
  const longAgo = new Date(now - 730 * 86_400_000);
  await reading(idle.chargerId, new Date(longAgo.getTime() - 60_000), 1_200);
  await reading(idle.chargerId, longAgo, 1_234);

  const res = await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(owner.token) });
  expect(res.statusCode).toBe(200);
  const byName = new Map(res.json().chargers.map((c: { nickname: string }) => [c.nickname, c]));
  expect(byName.get('in use')).toMatchObject({ latest_meter_wh: 5_000, meter_updated_at: new Date(now - 3_600_000).toISOString().replace(/\.\d{3}Z$/, 'Z') });
  expect(byName.get('idle')).toMatchObject({ latest_meter_wh: 1_234, meter_updated_at: longAgo.toISOString().replace(/\.\d{3}Z$/, 'Z') });
  expect(byName.get('never')).not.toHaveProperty('latest_meter_wh');
  expect(byName.get('never')).not.toHaveProperty('meter_updated_at');
});

it('plans a charger in use over the recent months only: the older partitions are not even locked', async () => {
  const owner = await aUser(svc.deps);
  const inUse = await anOcppCharger(svc, owner);
  await reading(inUse.chargerId, new Date(Date.now() - 60_000), 7_000);
  const recent = monthPartition(new Date(), -1).name;
  const locked = await svc.deps.db.transaction().execute(async (trx) => {
    const items = await listChargerItems({ ...svc.deps, db: joinTransaction(trx) }, owner.userId, inUse.chargerId);
    expect(items.map((i) => i.latest_meter_wh)).toEqual([7_000]);
    return lockedReadingPartitions(trx);
  });
  expect(locked.length).toBeGreaterThan(0);
  // the previous month on, and the partition for readings outside every month (it cannot be ruled out by a bound)
  for (const name of locked) expect(name === 'meter_readings_default' || name >= recent).toBe(true);
});
