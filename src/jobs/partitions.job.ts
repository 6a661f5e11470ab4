// meter_readings is partitioned by UTC calendar month (migration 0054). This job makes sure last month's, this month's
// and PARTITION_AHEAD_MONTHS ahead exist, so the hot path (a charger's live readings, and the late uploads of last
// month: an offline backlog) never writes into the default partition. Idempotent; run by the scheduler under its
// advisory lock and once at start-up. A month whose readings already sit in the default partition (a charger whose
// clock ran ahead) gets them moved into its new partition in the same transaction: PostgreSQL would refuse the new
// partition while the default holds rows of its range. D236: the scheduled run also gives every past month found in
// the default partition (an upload older than the first month the service ran, a clock behind) its own partition,
// so such readings do not stay in the default for good; a month ahead still waits there for its turn.
// Nothing is ever dropped: old partitions stay attached and queryable (signed MID readings are evidence).
// D245: creating a partition needs CREATE on the schema and ownership of meter_readings. `npm run migrate` (run as the
// owner role) creates the same months as the start; a runtime role with only SELECT/INSERT/UPDATE/DELETE that finds a
// month missing logs one error line saying what to do and the start goes on (readings of that month wait in the
// default partition and move when the month is made); the job's run then ends `failed` with that line.
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Deps } from '../deps.ts';
import type { Job } from './job.ts';

/** What creating partitions needs: the start's and the job's Deps, or what `npm run migrate` has. */
export type PartitionDeps = Pick<Deps, 'db' | 'clock'> & { logger: Logger; config: Pick<Config, 'PARTITION_AHEAD_MONTHS'> };

/** D245: a role that may not create the month partitions (SQLSTATE 42501), in one line saying what to do. */
export class PartitionPrivilegeError extends Error {
  readonly code = '42501';
  constructor(
    public readonly partition: string,
    cause: unknown,
  ) {
    const reason = (cause as { message?: unknown } | null)?.message;
    super(
      `meter_readings: cannot create the month partition ${partition}: ${typeof reason === 'string' ? reason : String(cause)} (42501). ` +
        'Run `npm run migrate` as the role that owns the schema (it makes last month to PARTITION_AHEAD_MONTHS ahead; monthly, ' +
        "e.g. from cron), or make the service's role the owner of the schema and of meter_readings; until then that month's " +
        'readings wait in meter_readings_default (nothing is lost)',
    );
    this.name = 'PartitionPrivilegeError';
    // one line in the log and in the job's record: the database's message and code are in it, its stack says nothing more
    this.stack = `${this.name}: ${this.message}`;
  }
}

const isPrivilegeError = (err: unknown) => (err as { code?: unknown } | null)?.code === '42501';

/** The partition name and bounds of the UTC month `offset` months after `now`'s. */
export function monthPartition(now: Date, offset: number): { name: string; from: Date; to: Date } {
  const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + offset, 1));
  const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
  const name = `meter_readings_${from.getUTCFullYear()}_${String(from.getUTCMonth() + 1).padStart(2, '0')}`;
  return { name, from, to };
}

/** Creates the missing month partitions from last month to `ahead` months ahead; returns the names created. */
export async function ensureReadingPartitions(deps: PartitionDeps, ahead = deps.config.PARTITION_AHEAD_MONTHS): Promise<string[]> {
  const offsets: number[] = [];
  for (let k = -1; k <= ahead; k++) offsets.push(k);
  return createMonthPartitions(deps, offsets);
}

/**
 * D245: the start's ensureReadingPartitions: a role that may not create a missing month is logged once as an error
 * saying what to do, and the start goes on (nothing is lost: the month's readings wait in the default partition).
 */
export async function ensureReadingPartitionsAtStart(deps: PartitionDeps): Promise<string[]> {
  try {
    return await ensureReadingPartitions(deps);
  } catch (err) {
    if (!(err instanceof PartitionPrivilegeError)) throw err;
    deps.logger.error({ event: 'partitions.not_permitted', partition: err.partition, code: err.code }, err.message);
    return [];
  }
}

/**
 * D236: the months before last month that have readings in the default partition, each made a partition (its rows
 * moved in). One pass over the default partition, which holds only readings outside every partition.
 */
export async function partitionPastMonthsInDefault(deps: PartitionDeps): Promise<string[]> {
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

async function createMonthPartitions(deps: PartitionDeps, offsets: number[]): Promise<string[]> {
  const created: string[] = [];
  try {
    for (const k of offsets) await createMonthPartition(deps, k, created);
  } finally {
    // also the months made before one that failed
    if (created.length) deps.logger.info({ partitions: created }, 'meter_readings: created month partitions');
  }
  return created;
}

async function createMonthPartition(deps: PartitionDeps, k: number, created: string[]): Promise<void> {
  const p = monthPartition(deps.clock(), k);
  const exists = await sql<{ ok: boolean }>`select to_regclass(${p.name}) is not null as ok`.execute(deps.db);
  if (exists.rows[0]?.ok) return;
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
  }).catch((err: unknown) => {
    // create table: "permission denied for schema …"; attach partition: "must be owner of table meter_readings"
    throw isPrivilegeError(err) ? new PartitionPrivilegeError(p.name, err) : err;
  });
}

export const partitionsJob: Job = {
  name: 'partitions',
  cron: (config) => config.PARTITION_CRON,
  async run(deps) {
    return { created: [...(await ensureReadingPartitions(deps)), ...(await partitionPastMonthsInDefault(deps))] };
  },
};
