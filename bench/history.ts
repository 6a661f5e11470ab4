// `bench:ocpp --history-months N`: the gateway's database as it is after N months in service, as far as the hot
// path can tell: meter_readings keeps every month (D24), so a statement planned over all of its partitions costs
// more every month. This adds N empty monthly partitions before the earliest one the migrations made (the readings
// in them would not change a plan that prunes them; one that does not prune pays for each partition, empty or not).
import { sql } from 'kysely';
import type { Db } from '../src/db/database.ts';
import { monthPartition } from '../src/jobs/partitions.job.ts';

/** Adds `months` monthly partitions of meter_readings before its earliest one; returns how many it has then. */
export async function addHistoryMonths(db: Db, months: number): Promise<number> {
  const bounds = await sql<{ b: string }>`
    select pg_get_expr(c.relpartbound, c.oid) as b from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = 'meter_readings'::regclass`.execute(db);
  const starts = bounds.rows.map((r) => /FROM \('(\d{4})-(\d{2})-01/.exec(r.b)).filter((m): m is RegExpExecArray => m !== null);
  if (starts.length === 0) throw new Error('meter_readings has no monthly partition to add history before');
  const first = starts.map((m) => Date.UTC(Number(m[1]), Number(m[2]) - 1, 1)).reduce((x, y) => Math.min(x, y));
  for (let k = 1; k <= months; k++) {
    const { name, from, to } = monthPartition(new Date(first), -k); // named and bounded as the partitions job does
    await sql.raw(`create table ${name} partition of meter_readings for values from ('${from.toISOString()}') to ('${to.toISOString()}')`).execute(db);
  }
  const n = await sql<{ n: number }>`select count(*)::int as n from pg_inherits where inhparent = 'meter_readings'::regclass`.execute(db);
  return n.rows[0]!.n;
}
