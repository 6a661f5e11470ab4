// `npm run bench:aggregate -- [--connections 500] [--months 24] [--history-months 36] [--runs 5]`
//
// The monthly energy aggregation (C4.7) on PostgreSQL (DATABASE_URL required) over a database with years of
// readings: a fresh database, --history-months monthly partitions of meter_readings before the ones the migrations
// make, and --connections eligible connections whose MID charger charged twice a month for --months months. Times a
// full run, then --runs rounds of the incremental runs the 15-minute job makes: with nothing changed, after a
// tenth of the chargers started a session (the quarter hour's new data), and after one in a hundred sent a reading
// of a year ago (an offline batch, stored as the gateway stores it: the reading, then the session's recompute).
// Prints each kind's p50 and max in ms and how many partitions of meter_readings a run planned (= locked); and a
// second full run as the job runs it, committing as it goes (D78): its transactions and the longest of them,
// against the same run in one transaction (what a CPO batch for one of its months could wait).
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { joinTransaction } from '../src/db/join-transaction.ts';
import type { Deps } from '../src/deps.ts';
import { recomputeSession } from '../src/domain/charging/session-energy.ts';
import { AGGREGATE_CHUNK_CONNECTIONS, aggregateMonthlyEnergy } from '../src/domain/energy/aggregate.ts';
import { anAccountWithConnection } from '../test/helpers/energy-factories.ts';
import { lockedReadingPartitions } from '../test/helpers/partitions.ts';
import { addHistoryMonths } from './history.ts';
import { runBench, withBenchService } from './bench-service.ts';

const { values: a } = parseArgs({
  options: {
    connections: { type: 'string', default: '500' },
    months: { type: 'string', default: '24' },
    'history-months': { type: 'string', default: '36' },
    runs: { type: 'string', default: '5' },
  },
});
const base = process.env.DATABASE_URL;
if (!base) {
  process.stderr.write('bench:aggregate needs DATABASE_URL (PostgreSQL)\n');
  process.exit(2);
}

const MONTH_MS = 30 * 86_400_000;

/** One incremental or full run: its time and the partitions it planned. */
async function timedRun(deps: Deps, full: boolean): Promise<{ ms: number; partitions: number; months: number }> {
  return deps.db.transaction().execute(async (trx) => {
    const t0 = performance.now();
    const s = await aggregateMonthlyEnergy({ ...deps, db: joinTransaction(trx) }, { full, safetyMarginSeconds: 0 });
    const ms = performance.now() - t0;
    return { ms, partitions: (await lockedReadingPartitions(trx)).length, months: s.months_recomputed };
  });
}

/** After `ms`, one write to the first aggregated connection's earliest month (as a CPO batch would make): how long it took. */
async function writeAfter(deps: Deps, ms: number): Promise<number> {
  await new Promise((r) => setTimeout(r, ms));
  const t0 = performance.now();
  await sql`
    update energy_months set updated_at = updated_at
     where (connection_id, month) = (select connection_id, month from energy_months order by connection_id, month limit 1)`.execute(deps.db);
  return performance.now() - t0;
}

/** Sessions of `chargers` started at each of `starts`, three register readings 30 minutes apart, kept as the gateway keeps them. */
async function sessionsOf(deps: Deps, chargers: string[], starts: Date[], tag: string): Promise<void> {
  await sql`
    insert into charging_sessions (charger_id, connector_id, transaction_id, started_at, status, ended_at, meter_start_wh)
    select c, 1, ${tag} || '-' || k || '-' || c, t, 'completed', t + interval '1 hour', 0
      from unnest(${chargers}::uuid[]) c, unnest(${starts}::timestamptz[]) with ordinality as x(t, k)`.execute(deps.db);
  await sql`
    insert into meter_readings (charger_id, session_id, connector_id, measured_at, wh, context)
    select s.charger_id, s.id, 1, s.started_at + make_interval(mins => 30 * g), 1000 * (g + 1), 'Sample.Periodic'
      from charging_sessions s, generate_series(0, 2) g
     where s.transaction_id like ${tag + '-%'}`.execute(deps.db);
  // energy and span as the gateway's recompute leaves them (the span's first end only where the schema has it)
  const hasFirst = (await sql<{ n: number }>`select count(*)::int as n from information_schema.columns where table_name = 'charging_sessions' and column_name = 'first_reading_at'`.execute(deps.db)).rows[0]!.n > 0;
  await sql`
    update charging_sessions s
       set energy_wh = 2000, last_meter_wh = 3000, meter_stop_wh = 3000, last_reading_at = s.started_at + interval '60 minutes'
           ${hasFirst ? sql`, first_reading_at = s.started_at` : sql``}
     where s.transaction_id like ${tag + '-%'}`.execute(deps.db);
}

async function main(): Promise<void> {
  await withBenchService(base!, 'aggregate', async (deps) => {
    const partitions = await addHistoryMonths(deps.db, Number(a['history-months']));
    const chargers: string[] = [];
    for (let i = 0; i < Number(a.connections); i++) chargers.push((await anAccountWithConnection(deps, { eligible: true })).midChargerId!);
    await sql`update connections set mandate_valid_from = '2020-01-01T00:00:00Z'`.execute(deps.db); // all of it counts
    const now = Date.now();
    const months = Number(a.months);
    const starts = Array.from({ length: months }, (_, k) => [new Date(now - (k + 1) * MONTH_MS), new Date(now - (k + 1) * MONTH_MS + 10 * 86_400_000)]).flat();
    await sessionsOf(deps, chargers, starts, 'hist');
    await sql`analyze`.execute(deps.db);
    const counts = (await sql<{ s: string; r: string }>`select (select count(*) from charging_sessions)::text as s, (select count(*) from meter_readings)::text as r`.execute(deps.db)).rows[0]!;

    const full = await timedRun(deps, true);
    // full again, months unchanged: as the job runs it (a few connections per transaction), then in one transaction;
    // a second into each, another client writes a month of the first connection (what a CPO batch would do)
    const ends: number[] = [];
    const t0 = performance.now();
    const [, waitedChunked] = await Promise.all([
      aggregateMonthlyEnergy(deps, { full: true, safetyMarginSeconds: 0, onChunk: () => void ends.push(performance.now()) }),
      writeAfter(deps, 1000),
    ]);
    const chunked = { ms: performance.now() - t0, transactions: ends.length, longest: Math.max(...ends.map((t, i) => t - (i === 0 ? t0 : ends[i - 1]!))) };
    const [again, waitedOne] = await Promise.all([timedRun(deps, true), writeAfter(deps, 1000)]);
    const kinds = { idle: [] as Array<{ ms: number; partitions: number; months: number }>, fresh: [] as typeof full[], late: [] as typeof full[] };
    for (let run = 0; run < Number(a.runs); run++) {
      kinds.idle.push(await timedRun(deps, false));
      // a tenth of the chargers start a session (an hour ago, readings until now)
      await sessionsOf(deps, chargers.filter((_, i) => i % 10 === run % 10), [new Date(Date.now() - 3_600_000)], `fresh${run}`);
      kinds.fresh.push(await timedRun(deps, false));
      // one in a hundred sends a reading of a year ago, stored as the gateway stores it
      const late = await sql<{ id: string; charger_id: string; started_at: Date }>`
        select distinct on (charger_id) id, charger_id, started_at from charging_sessions
         where charger_id = any(${chargers.filter((_, i) => i % 100 === run % 100)}::uuid[]) and started_at < ${new Date(now - 12 * MONTH_MS)}
         order by charger_id, started_at desc`.execute(deps.db);
      for (const s of late.rows) {
        await deps.db.transaction().execute(async (trx) => {
          await trx.selectFrom('charging_sessions').select('id').where('id', '=', s.id).forUpdate().execute();
          await trx
            .insertInto('meter_readings')
            .values({ charger_id: s.charger_id, session_id: s.id, connector_id: 1, measured_at: new Date(new Date(s.started_at).getTime() + 45 * 60_000 + run * 1000), wh: 2500 + run, context: 'Sample.Periodic' })
            .execute();
          await recomputeSession(trx, s.id, deps.config.OCPP_MAX_POWER_W);
        });
      }
      kinds.late.push(await timedRun(deps, false));
    }
    const p50 = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
    const line = (name: string, xs: typeof full[]) =>
      `  ${name.padEnd(50)} p50 ${p50(xs.map((x) => x.ms)).toFixed(1).padStart(8)} ms, max ${Math.max(...xs.map((x) => x.ms)).toFixed(1).padStart(8)} ms, ` +
      `months recomputed ${p50(xs.map((x) => x.months))}, partitions planned ${p50(xs.map((x) => x.partitions))} of ${partitions}\n`;
    process.stdout.write(
      `energy aggregation, ${a.connections} connections, ${counts.s} sessions, ${counts.r} readings over ${months} months, ` +
        `${partitions} partitions (PostgreSQL ${(await sql<{ server_version: string }>`show server_version`.execute(deps.db)).rows[0]!.server_version}):\n` +
        line('full run', [full]) +
        line('full run again (months unchanged), one transaction', [again]) +
        `  ${'  a write to its first month 1 s in waited'.padEnd(50)} ${waitedOne.toFixed(1).padStart(8)} ms\n` +
        `  ${'full run again, committed as it goes'.padEnd(50)} ${chunked.ms.toFixed(1).padStart(8)} ms in ${chunked.transactions} transactions of up to ${AGGREGATE_CHUNK_CONNECTIONS} connections, the longest ${chunked.longest.toFixed(1)} ms\n` +
        `  ${'  a write to its first month 1 s in waited'.padEnd(50)} ${waitedChunked.toFixed(1).padStart(8)} ms\n` +
        line(`incremental, nothing changed (${a.runs} runs)`, kinds.idle) +
        line('incremental, a tenth started a session', kinds.fresh) +
        line('incremental, 1 in 100 sent a reading of a year ago', kinds.late),
    );
  });
}

runBench('bench:aggregate', main);
