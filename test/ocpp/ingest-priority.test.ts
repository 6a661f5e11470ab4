// Group commit (ingest-pipeline.ts): a reading that continues the session its socket remembers is batched apart
// from slower messages and ahead of them, so a charger's periodic MeterValues is not answered only after a batch of
// other chargers' starts. Here another charger's StartTransaction waits on a table lock (as a start batch waits on a
// busy database); the reading sent in the same group-commit window is committed and answered meanwhile, the start
// once the lock is gone. Needs a second connection holding a lock: PostgreSQL (CI), not the embedded database.
import pg from 'pg';
import type { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline } from '../helpers/ocpp-factories.ts';

describe.runIf(!!process.env.DATABASE_URL)('readings of a remembered session ahead of other batches', () => {
  let svc: TestService;
  const { at } = hourAgoTimeline();
  const clients: RPCClient[] = [];

  beforeAll(async () => {
    // a long window: the reading and the start below are sure to arrive within one
    svc = await createTestService({ listen: true, env: { INGEST_FLUSH_MS: '150' } });
  });
  afterAll(async () => {
    for (const c of clients) await c.close({ force: true }).catch(() => {});
    await svc?.close();
  });

  it('answers the reading while a start of another charger waits on the database', { timeout: 30_000 }, async () => {
    const user = await aUser(svc.deps);
    const a = await anOcppCharger(svc, user);
    const b = await anOcppCharger(svc, user);
    const ca = await connectCharger(svc, a, 'ocpp1.6');
    const cb = await connectCharger(svc, b, 'ocpp1.6');
    clients.push(ca, cb);

    // charger A: a session and a first reading (its socket now remembers the session)
    const { transactionId } = (await ca.call('StartTransaction', { connectorId: 1, idTag: 'TAG-A', meterStart: 1000, timestamp: at(0) })) as { transactionId: number };
    await ca.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(5), 1400)] });

    // another connection locks the id tags: a start (its id tag's verdict) waits until the lock is released
    const locker = new pg.Client({ connectionString: svc.testDb.url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query('lock table ocpp_id_tokens in access exclusive mode');

      let started = false;
      const start = cb.call('StartTransaction', { connectorId: 1, idTag: 'TAG-B', meterStart: 500, timestamp: at(6) }).then((r) => {
        started = true;
        return r as { transactionId: number };
      });
      const reading = await ca.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(10), 1800)] });
      expect(reading).toEqual({});
      // acknowledged means committed: the reading is there, seen from another connection
      const stored = await locker.query(`select wh::text from meter_readings where charger_id = $1 order by measured_at desc limit 1`, [a.chargerId]);
      expect(stored.rows[0]?.wh).toBe('1800');
      expect(started).toBe(false);

      await locker.query('commit');
      const s = await start;
      expect(s.transactionId).toBeGreaterThan(transactionId);
    } finally {
      await locker.query('rollback').catch(() => {});
      await locker.end();
    }
    const session = await svc.deps.db.selectFrom('charging_sessions').select(['energy_wh']).where('charger_id', '=', a.chargerId).executeTakeFirstOrThrow();
    expect(session.energy_wh).toBe('800');
  });
});
