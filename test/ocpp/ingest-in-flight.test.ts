// Group commit (ingest-pipeline.ts): at most INGEST_BATCHES_IN_FLIGHT batches are written at once (D87), each on its
// own pooled connection; a batch that finds no free slot waits for one in the process, not in the database. Here
// every start's id-tag verdict waits on a table lock, so each batch of starts stays in flight: the database sees as
// many statements waiting on the lock as there are slots (2 by default, 1 when set so), never more, and every start
// is written once the lock is gone. Needs a second connection holding a lock: PostgreSQL (CI), not PGlite.
import pg from 'pg';
import type { RPCClient } from 'ocpp-rpc';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, eventually, hourAgoTimeline } from '../helpers/ocpp-factories.ts';

describe.runIf(!!process.env.DATABASE_URL)('batches in flight at once', () => {
  const services: TestService[] = [];
  const clients: RPCClient[] = [];
  const { at } = hourAgoTimeline();

  afterAll(async () => {
    for (const c of clients) await c.close({ force: true }).catch(() => {});
    for (const s of services) await s.close();
  });

  const lockWaits = async (locker: pg.Client) =>
    Number(
      (
        await locker.query(`select count(*) as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock' and pid <> pg_backend_pid()`)
      ).rows[0].n,
    );

  for (const [setting, slots] of [[undefined, 2], ['1', 1]] as const) {
    it(`INGEST_BATCHES_IN_FLIGHT ${setting ?? 'unset'}: ${slots} batch(es) of starts in the database at once`, { timeout: 30_000 }, async () => {
      const svc = await createTestService({ listen: true, env: { INGEST_FLUSH_MS: '5', ...(setting ? { INGEST_BATCHES_IN_FLIGHT: setting } : {}) } });
      services.push(svc);
      const user = await aUser(svc.deps);
      const chargers = [];
      for (let i = 0; i < 4; i++) {
        const ch = await anOcppCharger(svc, user);
        const cli = await connectCharger(svc, ch, 'ocpp1.6');
        clients.push(cli);
        chargers.push(cli);
      }
      const locker = new pg.Client({ connectionString: svc.testDb.url });
      await locker.connect();
      try {
        await locker.query('begin');
        await locker.query('lock table ocpp_id_tokens in access exclusive mode');
        // four starts, each in a window of its own (one batch each)
        const starts: Array<Promise<unknown>> = [];
        for (const [i, cli] of chargers.entries()) {
          starts.push(cli.call('StartTransaction', { connectorId: 1, idTag: `TAG-${i}`, meterStart: 1000, timestamp: at(i) }));
          await new Promise((r) => setTimeout(r, 100));
        }
        await eventually(async () => expect(await lockWaits(locker)).toBe(slots));
        // the others wait in the process: no more statements come while the slots are held
        await new Promise((r) => setTimeout(r, 300));
        expect(await lockWaits(locker)).toBe(slots);
        await locker.query('commit');
        await Promise.all(starts);
      } finally {
        await locker.query('rollback').catch(() => {});
        await locker.end();
      }
      const rows = await svc.deps.db.selectFrom('charging_sessions').select('id').execute();
      expect(rows).toHaveLength(4);
    });
  }
});
