// The set-based starts look a charger's sessions up through its own index entries, whatever the planner knows.
// A database whose statistics are missing or old (a fresh table, one that grew since its last ANALYZE, a server
// with autovacuum off) took each charger for hundreds of sessions, and the EXISTS check of a batch of starts
// hashed the whole charging_sessions table for every batch: 23 ms at 50,000 sessions, and growing with the table,
// which at a fleet's start of day was most of PostgreSQL's CPU.
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { BatchItem } from '../../src/domain/charging/batch.ts';
import { applySetBasedStarts } from '../../src/domain/charging/batch-starts.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService();
});
afterAll(async () => {
  await svc?.close();
});

it('a batch of starts probes each charger’s own sessions, never scanning the table, without statistics', { timeout: 60_000 }, async () => {
  const user = await aUser(svc.deps);
  const busy = await anOcppCharger(svc, user);
  // 60,000 sessions (of one charger), never analyzed: the planner assumes about a hundred per charger
  await sql`
    insert into charging_sessions (charger_id, connector_id, transaction_id, started_at, meter_start_wh, status)
    select ${busy.chargerId}::uuid, 1, 'old-' || g, now() - make_interval(mins => g), 0, 'completed'
      from generate_series(1, 60000) g`.execute(svc.deps.db);
  // a batch of a dozen starts: from about eight on, hashing the table looked cheaper than a dozen index probes
  const fresh: Array<{ chargerId: string }> = [];
  for (let i = 0; i < 12; i++) fresh.push(await anOcppCharger(svc, user));
  const startedAt = new Date(Date.now() - 60_000);
  const items: BatchItem[] = fresh.map((c) => ({
    chargerId: c.chargerId,
    maxPowerW: 11_000,
    ev: { kind: 'transaction_started', chargerTransactionId: null, connectorId: 1, idTag: null, startedAt, meterStartWh: 1000n, readings: [], offline: false },
  }));
  const scans = await svc.deps.db.transaction().execute(async (trx) => {
    const out = await applySetBasedStarts(trx, items, new Date());
    expect(out.map((o) => o?.kind)).toEqual(fresh.map(() => 'transaction_started'));
    const r = await sql<{ seq_scan: string }>`select seq_scan from pg_stat_xact_user_tables where relname = 'charging_sessions'`.execute(trx);
    return Number(r.rows[0]?.seq_scan ?? 0);
  });
  expect(scans).toBe(0);
  const made = await svc.deps.db.selectFrom('charging_sessions').select('charger_id').where('charger_id', 'in', fresh.map((c) => c.chargerId)).execute();
  expect(made).toHaveLength(12);
});
