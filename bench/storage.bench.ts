// `npm run bench:storage -- [--chargers 1000] [--hours 24]`
//
// Bytes per stored meter reading on PostgreSQL (DATABASE_URL required): a fresh database is migrated, one
// session per charger is written with one register reading per minute for --hours hours (as the gateway stores
// a periodic MeterValues: session, connector, context Sample.Periodic, no signature, arrival a second after the
// measurement), and the size of
// meter_readings (every partition, its indexes and TOAST) is divided by the row count. Prints the bytes per reading
// and what a charger writes in a year at one reading per 60 s and per 10 s.
import os from 'node:os';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { createDb } from '../src/db/database.ts';
import { migrate } from '../src/db/migrate.ts';
import { freshDatabase } from './fresh-db.ts';
import { runBench } from './bench-service.ts';

const { values: a } = parseArgs({
  options: { chargers: { type: 'string', default: '1000' }, hours: { type: 'string', default: '24' }, json: { type: 'boolean', default: false } },
});
const base = process.env.DATABASE_URL;
if (!base) {
  process.stderr.write('bench:storage needs DATABASE_URL (PostgreSQL)\n');
  process.exit(2);
}

async function main(): Promise<void> {
  const fresh = await freshDatabase(base!, 'ere_bench_storage');
  const h = await createDb({ DATABASE_URL: fresh.url, DB_STATEMENT_TIMEOUT_MS: 0 });
  try {
    await migrate(h.db);
    const chargers = Number(a.chargers);
    const minutes = Number(a.hours) * 60;
    // this month's partition holds it all: the day ends before the month does
    const start = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 1, 0, 0, 0));
    const t0 = performance.now();
    await sql`insert into chargers (ocpp_identity, nickname) select 'STORE-' || g, 'storage bench' from generate_series(1, ${chargers}) g`.execute(h.db);
    await sql`
      insert into charging_sessions (charger_id, transaction_id, started_at, status)
      select id, '1000' || row_number() over (), ${start}, 'active' from chargers`.execute(h.db);
    await sql`
      insert into meter_readings (charger_id, session_id, connector_id, measured_at, wh, context, received_at)
      select s.charger_id, s.id, 1, ${start}::timestamptz + make_interval(mins => m), 1000000 + m * 120, 'Sample.Periodic',
             -- stored about a second after it was measured, each charger's at its own moment (a batch at a steady
             -- rate holds a message or a few, each batch stamped with its own time)
             ${start}::timestamptz + make_interval(mins => m, secs => 1 + s.k / 1000.0)
        from (select *, row_number() over (order by id) as k from charging_sessions) s cross join generate_series(0, ${minutes - 1}) m`.execute(h.db);
    await sql`vacuum analyze meter_readings`.execute(h.db).catch(() => undefined);
    const r = await sql<{ rows: string; bytes: string; heap: string }>`
      select (select count(*) from meter_readings)::text as rows,
             sum(pg_total_relation_size(c.oid))::text as bytes,
             sum(pg_relation_size(c.oid))::text as heap
        from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent = 'meter_readings'::regclass`.execute(h.db);
    const rows = BigInt(r.rows[0]!.rows);
    const bytes = BigInt(r.rows[0]!.bytes);
    const heap = BigInt(r.rows[0]!.heap);
    const perReading = Number((bytes * 10n) / rows) / 10;
    const year = (everyS: number) => Math.round((perReading * (365 * 86_400)) / everyS / 1e6);
    const out = {
      machine: { nproc: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown' },
      postgres: (await sql<{ server_version: string }>`show server_version`.execute(h.db)).rows[0]!.server_version,
      readings: Number(rows),
      bytes_total: Number(bytes),
      bytes_per_reading: perReading,
      heap_bytes_per_reading: Number((heap * 10n) / rows) / 10,
      mb_per_charger_year_every_60s: year(60),
      mb_per_charger_year_every_10s: year(10),
      seconds_to_write: Math.round(performance.now() - t0) / 1000,
    };
    if (a.json) process.stdout.write(JSON.stringify(out, null, 2) + '\n');
    else
      process.stdout.write(
        `meter_readings: ${out.readings} readings, ${(out.bytes_total / 1048576).toFixed(1)} MB with indexes\n` +
          `  ${out.bytes_per_reading} bytes per reading (${out.heap_bytes_per_reading} in the table itself, the rest indexes)\n` +
          `  a charger-year: ${out.mb_per_charger_year_every_60s} MB at one reading per 60 s, ${out.mb_per_charger_year_every_10s} MB at one per 10 s\n`,
      );
  } finally {
    await h.close();
    await fresh.drop();
  }
}

runBench('bench:storage', main);
