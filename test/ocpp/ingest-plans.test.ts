// The set-based starts look a charger's sessions up through its own index entries, whatever the planner knows.
// A database whose statistics are missing or old (a fresh table, one that grew since its last ANALYZE, a server
// with autovacuum off) took each charger for hundreds of sessions, and the EXISTS check of a batch of starts
// hashed the whole charging_sessions table for every batch: 23 ms at 50,000 sessions, and growing with the table,
// which at a fleet's start of day was most of PostgreSQL's CPU. The readings path looks its sessions up by
// (charger_id, transaction_id) and its stored readings by their unique key: index probes at the largest batch too.
import { sql } from 'kysely';
import { createDb, type Db } from '../../src/db/database.ts';
import { PREPARED, PREPARED_MARK, preparedName } from '../../src/db/prepared.ts';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { BatchItem } from '../../src/domain/charging/batch.ts';
import { applySetBased } from '../../src/domain/charging/batch.ts';
import { applySetBasedStarts } from '../../src/domain/charging/batch-starts.ts';
import { addHistoryMonths } from '../../bench/history.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger } from '../helpers/ocpp-factories.ts';
import { lockedReadingPartitions } from '../helpers/partitions.ts';

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
  const startedAt = new Date(Math.floor(Date.now() / 1000) * 1000 - 60_000 + 123);
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
  const made = await svc.deps.db.selectFrom('charging_sessions').select(['charger_id', 'started_at']).where('charger_id', 'in', fresh.map((c) => c.chargerId)).execute();
  expect(made).toHaveLength(12);
  expect(made.map((m) => m.started_at.getTime())).toEqual(fresh.map(() => startedAt.getTime())); // to the millisecond
});

it('a batch of 256 readings finds its sessions and stored readings through the indexes, with statistics from when the tables were empty', { timeout: 60_000 }, async () => {
  const user = await aUser(svc.deps);
  const ch = await anOcppCharger(svc, user);
  const t0 = new Date(Date.now() - 3_600_000);
  // statistics taken while the tables were (nearly) empty, then 60,000 sessions of one charger, 256 of them running
  // with a first reading, and 200,000 readings of another connector: the planner's worst case, a table it thinks tiny
  await sql`analyze charging_sessions`.execute(svc.deps.db);
  await sql`analyze meter_readings`.execute(svc.deps.db);
  await sessionsOf(svc.deps.db, ch.chargerId, 'run-', 60_000, t0, 256);
  await sql`
    insert into meter_readings (charger_id, connector_id, measured_at, measurand, phase, wh)
    select ${ch.chargerId}::uuid, 2, ${t0}::timestamptz - make_interval(secs => g), 'Energy.Active.Import.Register', '', g
      from generate_series(1, 200000) g`.execute(svc.deps.db);
  const at = new Date(t0.getTime() + 60_000);
  const items = readingsOf(ch.chargerId, 256, 'run-', new Date(at.getTime() + 7), 150n);
  const scans = await svc.deps.db.transaction().execute(async (trx) => {
    const out = await applySetBased(trx, items, new Date());
    expect(out.filter((o) => o?.kind === 'ack')).toHaveLength(256);
    const r = await sql<{ seq_scan: string }>`select seq_scan from pg_stat_xact_user_tables where relname = 'charging_sessions'`.execute(trx);
    const m = await sql<{ n: string }>`select coalesce(sum(seq_scan), 0)::text as n from pg_stat_xact_user_tables where relname like 'meter_readings%'`.execute(trx);
    return { sessions: Number(r.rows[0]?.seq_scan ?? 0), readings: Number(m.rows[0]?.n ?? 0) };
  });
  expect(scans).toEqual({ sessions: 0, readings: 0 });
  const s = await svc.deps.db.selectFrom('charging_sessions').select(['energy_wh']).where('charger_id', '=', ch.chargerId).where('transaction_id', '=', 'run-7').executeTakeFirstOrThrow();
  expect(s.energy_wh).toBe('150'); // 100 Wh before, 50 more
  // times go to the statement as epoch milliseconds and are stored to the millisecond
  const r = await svc.deps.db.selectFrom('meter_readings').select(['measured_at']).where('charger_id', '=', ch.chargerId).where('connector_id', '=', 1).where('wh', '=', '150').orderBy('measured_at').execute();
  expect(r).toHaveLength(256);
  expect(r[6]!.measured_at.getTime()).toBe(at.getTime() + 6 * 1000 + 7);
});

it('a batch of a few readings probes the sessions’ primary key, with statistics up to date', { timeout: 60_000 }, async () => {
  // the rows go to the statement as one JSON parameter, which the planner takes for 100 rows whatever it holds:
  // against 10,000 analyzed sessions that looked cheaper as a hash of the whole table than as 100 probes
  // (a database of its own: the 60,000 sessions of the tests above would make the scan look dear)
  const own = await createTestService();
  try {
    await fewReadings(own);
  } finally {
    await own.close();
  }
});

it('a batch of a few readings probes the sessions’ primary key on tables never analyzed', { timeout: 60_000 }, async () => {
  // a server with autovacuum off, or a table that grew since it was created: no statistics at all. The guard that
  // checks the sessions' row versions joined them to the JSON rows and the planner, costing the C4.6 check of a
  // reading without a transaction id as a scan per session, hashed the whole table instead, for every batch (2.6 ms
  // a statement at 10,000 sessions in the benchmark, growing with the table; here 2,000 sessions and 8 readings, where
  // the old statement scanned the table three times)
  await withOwnService(async (own) => {
    const ch = await anOcppCharger(own, await aUser(own.deps));
    const t0 = new Date(Date.now() - 3_600_000);
    await sessionsOf(own.deps.db, ch.chargerId, 'raw-', 2000, t0);
    const items = readingsOf(ch.chargerId, 8, 'raw-', new Date(t0.getTime() + 60_000), 170n);
    expect(items).toHaveLength(8);
    expect(await batchGrew(own, items, 'seq_scan', 'charging_sessions')).toBe(0);
  });
});

it('the check that no reading of a batch is stored yet probes each reading’s key, however many readings its minutes hold', { timeout: 60_000 }, async () => {
  // a burst of stops: 222 readings over the minutes in which the month's partition, never analyzed, holds 4,400 other
  // readings. As a join, the check read every reading of those minutes and compared each with every reading of the
  // batch (277 ms for such a batch in the benchmark); a probe per reading reads none of them
  await withOwnService(async (own) => {
    const ch = await anOcppCharger(own, await aUser(own.deps));
    const t0 = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000);
    await sessionsOf(own.deps.db, ch.chargerId, 'key-', 222, t0);
    const at = new Date(t0.getTime() + 60_000);
    await sql`
      insert into meter_readings (charger_id, connector_id, measured_at, measurand, phase, wh)
      select ${ch.chargerId}::uuid, 2, ${at}::timestamptz + make_interval(secs => g * 0.05), 'Energy.Active.Import.Register', '', g
        from generate_series(1, 4400) g`.execute(own.deps.db);
    const items = readingsOf(ch.chargerId, 222, 'key-', at, 180n);
    expect(items).toHaveLength(222);
    expect(await batchGrew(own, items, 'seq_tup_read', 'meter_readings%')).toBe(0);
  });
});

it('the readings batch statement is prepared once per connection and reused whatever the batch size (D82)', { timeout: 60_000 }, async () => {
  // sent unnamed, PostgreSQL parsed, analysed and planned the statement for every batch (0.7 ms of its CPU each);
  // named, it is parsed once per connection and may keep a generic plan. That needs one text for every batch size
  // (the rows' count goes as a parameter): a connection would otherwise hold a prepared statement per size
  await withOwnService(async (own) => {
    const ch = await anOcppCharger(own, await aUser(own.deps));
    const t0 = new Date(Math.floor(Date.now() / 1000) * 1000 - 3_600_000);
    await sessionsOf(own.deps.db, ch.chargerId, 'prep-', 8, t0);
    const prepared = await own.deps.db.transaction().execute(async (trx) => {
      for (let size = 1; size <= 8; size++) {
        const at = new Date(t0.getTime() + size * 60_000);
        const out = await applySetBased(trx, readingsOf(ch.chargerId, size, 'prep-', at, 100n + BigInt(size) * 10n), new Date());
        expect(out.filter((o) => o?.kind === 'ack')).toHaveLength(size);
      }
      const r = await sql<{ name: string; statement: string; runs: number }>`
        select name, statement, (generic_plans + custom_plans)::int as runs from pg_prepared_statements`.execute(trx);
      return r.rows.filter((p) => p.statement.startsWith(PREPARED_MARK));
    });
    // every reading stored once, in its session
    const stored = await sql<{ n: number }>`select count(*)::int as n from meter_readings where charger_id = ${ch.chargerId}`.execute(own.deps.db);
    expect(stored.rows[0]!.n).toBe(36);
    if (own.testDb.kind === 'pg') {
      expect(prepared).toHaveLength(1);
      expect(prepared[0]!.name).toBe(preparedName(prepared[0]!.statement));
      expect(prepared[0]!.runs).toBe(8);
    } else {
      expect(prepared).toEqual([]); // PGlite: no round trip to save, the mark is a comment
    }
  });
});

it('DB_PREPARED_STATEMENTS=false sends the marked statements unnamed', { timeout: 30_000 }, async () => {
  if (svc.testDb.kind !== 'pg' || !svc.testDb.url) {
    // PGlite prepares nothing either way; the statement runs
    expect((await sql<{ one: number }>`${PREPARED} select 1 as one`.execute(svc.deps.db)).rows).toEqual([{ one: 1 }]);
    return;
  }
  for (const [setting, expected] of [[false, 0], [undefined, 1]] as const) {
    const h = await createDb({ DATABASE_URL: svc.testDb.url, poolSize: 1, DB_PREPARED_STATEMENTS: setting });
    try {
      await sql`${PREPARED} select ${1}::int as one`.execute(h.db);
      const r = await sql<{ n: number }>`select count(*)::int as n from pg_prepared_statements where statement like ${PREPARED_MARK + '%'}`.execute(h.db);
      expect(r.rows[0]!.n).toBe(expected);
    } finally {
      await h.close();
    }
  }
});

/** A test database of its own, closed afterwards. */
async function withOwnService(fn: (svc: TestService) => Promise<void>): Promise<void> {
  const own = await createTestService();
  try {
    await fn(own);
  } finally {
    await own.close();
  }
}

/**
 * How much a pg_stat_xact_user_tables counter of the tables named `like` grew while `fn` ran in `trx` (the counters
 * include what the connection has not reported yet, hence the difference).
 */
async function grewBy(trx: Db, counter: 'seq_scan' | 'seq_tup_read', like: string, fn: () => Promise<void>): Promise<number> {
  const read = async () =>
    Number((await sql<{ n: string }>`select coalesce(sum(${sql.ref(counter)}), 0)::text as n from pg_stat_xact_user_tables where relname like ${like}`.execute(trx)).rows[0]!.n);
  const before = await read();
  await fn();
  return (await read()) - before;
}

/**
 * Runs a readings batch in a transaction of its own, every message acknowledged, and says how much a
 * pg_stat_xact_user_tables counter of the tables named `like` grew meanwhile (grewBy).
 */
async function batchGrew(own: TestService, items: BatchItem[], counter: 'seq_scan' | 'seq_tup_read', like: string): Promise<number> {
  return own.deps.db.transaction().execute((trx) =>
    grewBy(trx, counter, like, async () => {
      const out = await applySetBased(trx, items, new Date());
      expect(out.filter((o) => o?.kind === 'ack')).toHaveLength(items.length);
    }),
  );
}

async function fewReadings(svc: TestService): Promise<void> {
  const user = await aUser(svc.deps);
  const ch = await anOcppCharger(svc, user);
  const t0 = new Date(Date.now() - 3_600_000);
  await sessionsOf(svc.deps.db, ch.chargerId, 'few-', 10_000, t0);
  await sql`analyze charging_sessions`.execute(svc.deps.db);
  const at = new Date(t0.getTime() + 60_000);
  const items = readingsOf(ch.chargerId, 6, 'few-', at, 160n);
  const scans = await svc.deps.db.transaction().execute(async (trx) => {
    const out = await applySetBased(trx, items, new Date());
    expect(out.filter((o) => o?.kind === 'ack')).toHaveLength(6);
    const r = await sql<{ seq_scan: string }>`select seq_scan from pg_stat_xact_user_tables where relname = 'charging_sessions'`.execute(trx);
    return Number(r.rows[0]?.seq_scan ?? 0);
  });
  expect(scans).toBe(0);
}

it('a batch of readings or starts plans and locks only the partitions of its readings’ months, whatever the history', { timeout: 60_000 }, async () => {
  // meter_readings is partitioned by month and keeps every month (signed readings are evidence): after three years
  // a statement that let the planner see every partition planned all 41 of them for each batch (4.4 ms of planning
  // a statement instead of 0.7), even though it executed only the current one. A planned partition is locked until
  // the transaction ends, so the locks tell which ones the statement was planned over.
  const own = await createTestService();
  try {
    const db = own.deps.db;
    // 36 months of history before the partitions the migrations made
    expect(await addHistoryMonths(db, 36)).toBeGreaterThanOrEqual(40);

    const user = await aUser(own.deps);
    const ch = await anOcppCharger(own, user);
    const t0 = new Date(Date.now() - 3_600_000);
    await sessionsOf(db, ch.chargerId, 'part-', 6, t0);
    const holding = (since: Date) =>
      sql<{ relname: string }>`select distinct tableoid::regclass::text as relname from meter_readings where charger_id = ${ch.chargerId} and measured_at >= ${since} order by 1`
        .execute(db)
        .then((r) => r.rows.map((x) => x.relname));

    // readings that continue six sessions
    const at = new Date(t0.getTime() + 60_000);
    const readLocks = await db.transaction().execute(async (trx) => {
      const out = await applySetBased(trx, readingsOf(ch.chargerId, 6, 'part-', at, 160n), new Date());
      expect(out.filter((o) => o?.kind === 'ack')).toHaveLength(6);
      return lockedReadingPartitions(trx);
    });
    const readMonths = await holding(at);
    expect(readMonths.length).toBeGreaterThanOrEqual(1);
    expect(readLocks).toEqual(readMonths);

    // starts of new sessions, each with its meterStart as a register reading
    const fresh: Array<{ chargerId: string }> = [];
    for (let i = 0; i < 3; i++) fresh.push(await anOcppCharger(own, user));
    const startedAt = new Date(Date.now() - 30_000);
    const startLocks = await db.transaction().execute(async (trx) => {
      const items: BatchItem[] = fresh.map((c) => ({
        chargerId: c.chargerId,
        maxPowerW: 11_000,
        ev: { kind: 'transaction_started', chargerTransactionId: null, connectorId: 1, idTag: null, startedAt, meterStartWh: 1000n, readings: [], offline: false },
      }));
      const out = await applySetBasedStarts(trx, items, new Date());
      expect(out.map((o) => o?.kind)).toEqual(fresh.map(() => 'transaction_started'));
      return lockedReadingPartitions(trx);
    });
    const startMonths = await sql<{ relname: string }>`
      select distinct tableoid::regclass::text as relname from meter_readings where charger_id in (${sql.join(fresh.map((c) => c.chargerId))}) order by 1`
      .execute(db)
      .then((r) => r.rows.map((x) => x.relname));
    expect(startMonths).toHaveLength(1);
    expect(startLocks).toEqual(startMonths);
  } finally {
    await own.close();
  }
});

/**
 * Sessions `${prefix}1` … `${prefix}n` of a charger on connector 1, started a minute apart before `t0`, each with
 * 100 Wh and its last reading at `t0`; the first `active` of them running, the rest completed.
 */
async function sessionsOf(db: Db, chargerId: string, prefix: string, n: number, t0: Date, active = n): Promise<void> {
  await sql`
    insert into charging_sessions (charger_id, connector_id, transaction_id, started_at, meter_start_wh, status, last_meter_wh, last_reading_at, energy_wh)
    select ${chargerId}::uuid, 1, ${prefix}::text || g, ${t0}::timestamptz - make_interval(mins => g), 0,
           case when g <= ${active}::int then 'active' else 'completed' end, 100, ${t0}::timestamptz, 100
      from generate_series(1, ${n}::int) g`.execute(db);
}

/** One MeterValues item per session `${prefix}1` … `${prefix}n` of a charger, a second apart from `at`, each at `wh`. */
function readingsOf(chargerId: string, n: number, prefix: string, at: Date, wh: bigint): BatchItem[] {
  return Array.from({ length: n }, (_, i) => ({
    chargerId,
    maxPowerW: 11_000,
    ev: {
      kind: 'meter_values',
      connectorId: 1,
      ref: { kind: 'gateway', transactionId: `${prefix}${i + 1}` },
      readings: [{ measuredAt: new Date(at.getTime() + i * 1000), measurand: 'Energy.Active.Import.Register', phase: '', wh, context: 'Sample.Periodic', signedData: null }],
    },
  }));
}
