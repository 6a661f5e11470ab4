// D250: every process tells time by PostgreSQL's clock: a machine whose clock drifted measures its offset from the
// database (at start and every minute) and corrects its own by it, shows the offset on /metrics and says once that it
// is off. Here the machine's clock is made 10 minutes behind (and 90 s ahead) of the database's, which on this machine
// is the real time.
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDbClock } from '../../src/db/db-clock.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { logCapture } from '../helpers/log-capture.ts';

describe('the database clock (D250)', () => {
  let tdb: TestDb;
  beforeAll(async () => {
    tdb = await createTestDb();
  });
  afterAll(() => tdb?.close());

  it('a machine 10 minutes behind tells the database\'s time, shows its offset and says so once', async () => {
    const log = logCapture('info');
    const metrics = new Registry();
    const behind = () => Date.now() - 600_000;
    const clock = createDbClock({ db: tdb.db, logger: log.logger, metrics, machineNow: behind });
    try {
      expect(Math.abs(clock.now().getTime() - Date.now())).toBeGreaterThan(590_000); // not measured yet: the machine's
      expect(await clock.sample()).toBe(true);
      expect(Math.abs(clock.now().getTime() - Date.now())).toBeLessThan(2_000);
      expect(clock.offsetMs()).toBeGreaterThan(598_000);
      expect(clock.offsetMs()).toBeLessThan(602_000);
      const text = await metrics.metrics();
      const shown = Number(/^clock_offset_seconds (\S+)$/m.exec(text)?.[1]);
      expect(shown).toBeGreaterThan(598);
      expect(shown).toBeLessThan(602);
      expect(await clock.sample()).toBe(true);
      expect(log.of('clock.offset')).toHaveLength(1);
      expect(log.of('clock.offset')[0]).toMatchObject({ level: 40, msg: expect.stringMatching(/behind PostgreSQL's/) });
    } finally {
      clock.stop();
    }
  });

  it('a machine 90 s ahead is corrected the other way; one in time is not warned about', async () => {
    const log = logCapture('info');
    const ahead = createDbClock({ db: tdb.db, logger: log.logger, machineNow: () => Date.now() + 90_000 });
    const inTime = createDbClock({ db: tdb.db, logger: log.logger });
    try {
      await ahead.sample();
      await inTime.sample();
      expect(Math.abs(ahead.now().getTime() - Date.now())).toBeLessThan(2_000);
      expect(ahead.offsetMs()).toBeLessThan(-88_000);
      expect(Math.abs(inTime.offsetMs())).toBeLessThan(1_000);
      expect(log.of('clock.offset')).toEqual([expect.objectContaining({ msg: expect.stringMatching(/ahead of PostgreSQL's/) })]);
    } finally {
      ahead.stop();
      inTime.stop();
    }
  });

  if (process.env.DATABASE_URL) {
    describe('a service on PostgreSQL', () => {
      let svc: TestService;
      beforeAll(async () => {
        svc = await createTestService();
      });
      afterAll(() => svc?.close());

      it('tells time by the database and shows clock_offset_seconds', async () => {
        expect(Math.abs(svc.deps.clock().getTime() - Date.now())).toBeLessThan(2_000);
        expect(await svc.deps.metrics.metrics()).toMatch(/^clock_offset_seconds -?\d/m);
      });
    });
  }
});
