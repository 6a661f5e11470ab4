// meter_readings is partitioned by UTC calendar month (migration 0054). This job makes sure last month's, this month's
// and PARTITION_AHEAD_MONTHS ahead exist, so the hot path (a charger's live readings, and the late uploads of last
// month: an offline backlog) never writes into the default partition. Idempotent; run by the scheduler under its
// advisory lock and once at start-up. A month whose readings already sit in the default partition (a charger whose
// clock ran ahead) gets them moved into its new partition in the same transaction: PostgreSQL would refuse the new
// partition while the default holds rows of its range. D236: the scheduled run also gives every past month found in
// the default partition (an upload older than the first month the service ran, a clock behind) its own partition,
// so such readings do not stay in the default for good; a month ahead still waits there for its turn.
// Nothing is ever dropped: old partitions stay attached and queryable (signed MID readings are evidence).
import { sql } from 'kysely';
import type { Deps } from '../deps.ts';
import type { Job } from './job.ts';

/** The partition name and bounds of the UTC month `offset` months after `now`'s. */
export function monthPartition(now: Date, offset: number): { name: string; from: Date; to: Date } {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1));
  const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
  const name = `meter_readings_${from.getUTCFullYear()}_${String(from.getUTCMonth() + 1).padStart(2, '0')}`;
  return { name, from, to };
}

/** Creates the missing month partitions from last month to `ahead` months ahead; returns the names created. */
export async function ensureReadingPartitions(deps: Deps, ahead = deps.config.PARTITION_AHEAD_MONTHS): Promise<string[]> {
  const offsets: number[] = [];
  for (let k = -1; k <= ahead; k++) offsets.push(k);
  return createMonthPartitions(deps, offsets);
}

/**
 * D236: the months before last month that have readings in the default partition, each made a partition (its rows
 * moved in). One pass over the default partition, which holds only readings outside every partition.
 */
export async function partitionPastMonthsInDefault(deps: Deps): Promise<string[]> {
  const last = monthPartition(deps.clock(), -1).from;
  const months = await sql<{ month: Date }>`
    select distinct date_trunc('month', measured_at at time zone 'UTC') at time zone 'UTC' as month
      from meter_readings_default where measured_at < ${last} order by 1`.execute(deps.db);
  const now = deps.clock();
  const offsets = months.rows.map((r) => {
    const m = new Date(r.month);
    return (m.getUTCFullYear() - now.getUTCFullYear()) * 12 + (m.getUTCMonth() - now.getUTCMonth());
  });
  return createMonthPartitions(deps, offsets);
}

async function createMonthPartitions(deps: Deps, offsets: number[]): Promise<string[]> {
  const created: string[] = [];
  for (const k of offsets) {
    const p = monthPartition(deps.clock(), k);
    const exists = await sql<{ ok: boolean }>`select to_regclass(${p.name}) is not null as ok`.execute(deps.db);
    if (exists.rows[0]?.ok) continue;
    await deps.db.transaction().execute(async (trx) => {
      // one creator at a time (two processes starting together); the loser finds it made. D238: found by reading
      // pg_class, not by to_regclass: an advisory lock does not make the backend take in other sessions' catalog
      // changes, so to_regclass answered from the negative cache entry of the check above (the other process's
      // table unseen), and the second worker of a cluster died at start on "relation … already exists"
      await sql`select pg_advisory_xact_lock(hashtext('meter_readings partitions'))`.execute(trx);
      const again = await sql<{ ok: boolean }>`
        select exists (select 1 from pg_class c join pg_namespace n on n.oid = c.relnamespace
                        where c.relname = ${p.name} and n.nspname = current_schema()) as ok`.execute(trx);
      if (again.rows[0]?.ok) return;
      const table = sql.table(p.name);
      await sql`create table ${table} (like meter_readings including defaults including constraints)`.execute(trx);
      await sql`
        with moved as (
          delete from meter_readings_default where measured_at >= ${p.from} and measured_at < ${p.to} returning *
        )
        insert into ${table} select * from moved`.execute(trx);
      await sql`alter table meter_readings attach partition ${table} for values from (${sql.lit(p.from.toISOString())}) to (${sql.lit(p.to.toISOString())})`.execute(trx);
      created.push(p.name);
    });
  }
  if (created.length) deps.logger.info({ partitions: created }, 'meter_readings: created month partitions');
  return created;
}

export const partitionsJob: Job = {
  name: 'partitions',
  cron: (config) => config.PARTITION_CRON,
  async run(deps) {
    return { created: [...(await ensureReadingPartitions(deps)), ...(await partitionPastMonthsInDefault(deps))] };
  },
};
