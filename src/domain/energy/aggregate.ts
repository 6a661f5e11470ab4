// C4.7: the OCPP monthly aggregation. Per active connection and Amsterdam month: the energy of the MID chargers
// of the connection's account that counts (C5.4: from the machtiging's moment on), split at month boundaries and at
// that moment (ere/counting.ts), written through recordMonthlyEnergy (source 'ocpp'), which decides what the
// aggregation may overwrite (never a registered month, never a month the CPO delivered). Re-runs change nothing.
//
// Three parts: the dirty-month plan (aggregate-plan.ts), the per-month energy step (month-energy.ts) and this
// orchestrator. Incremental (docs/energy.md): a run recomputes only the (connection, month) pairs whose inputs
// changed since the watermark of the last successful run, plus the whole history of a connection whose inputs
// changed (fingerprint). No watermark → a full recompute; recomputeAllMonthlyEnergy forces one.
//
// A run commits as it goes (D78): its connections in transactions of AGGREGATE_CHUNK_CONNECTIONS each (a
// connection's months, their write and its bookkeeping together), under a session-level advisory lock held for the
// whole run, and the watermark last. A full run over a fleet takes minutes; in one transaction it held every
// written month's row lock (a CPO batch for one of them waited) and kept the vacuum from the hot tables' dead rows
// for as long. A run that fails part-way leaves the old watermark: the next run recomputes what it had recomputed
// (the write path makes that `unchanged`), and a connection's fingerprint is committed only with its results.
import { sql } from 'kysely';
import { LOCK_NAMESPACE, withAdvisoryLock } from '../../db/locks.ts';
import type { Deps } from '../../deps.ts';
import { monthOf, nextMonth } from '../../lib/amsterdam-time.ts';
import { planAggregation, type ConnPlan } from './aggregate-plan.ts';
import { monthlyChargerEnergy, oneMonthChargerEnergy, type MonthTotal } from './month-energy.ts';
import { recordMonthlyEnergies, type RecordEnergyInput } from './record-energy.ts';
import { holdMonthsOverCapacity } from './held-months.ts';

export { monthlyChargerEnergy, oneMonthChargerEnergy, type MonthTotal } from './month-energy.ts';

/** Advisory lock of a run, apart from the scheduler's own lock on the job name (the job is safe called directly). */
export const AGGREGATE_LOCK_NAME = 'energy-aggregate:run';

/** Connections per transaction of a run. */
export const AGGREGATE_CHUNK_CONNECTIONS = 100;

/**
 * The next run re-reads what changed after (run start − this margin): a transaction still in flight when a run
 * starts stamps its rows with its own start time (now()), which may lie before the run's start. Overlap is
 * harmless: writes are idempotent.
 */
export const WATERMARK_SAFETY_MARGIN_SECONDS = 300;

export interface AggregateOptions {
  /** recompute every connection's whole history (also when no watermark exists yet) */
  full?: boolean;
  /** overrides WATERMARK_SAFETY_MARGIN_SECONDS (tests) */
  safetyMarginSeconds?: number;
  /** connections per transaction (default AGGREGATE_CHUNK_CONNECTIONS) */
  chunkConnections?: number;
  /** after each transaction of the run committed: connections done, of how many (progress) */
  onChunk?: (done: number, of: number) => void | Promise<void>;
}

export interface AggregateSummary {
  skipped?: 'locked';
  mode: 'full' | 'incremental';
  connections: number;
  /** (connection, month) pairs recomputed and offered to the write path or left alone */
  months_recomputed: number;
  /** connections recomputed over their whole history (full run, new connection, inputs changed) */
  connections_full: number;
  created: number;
  updated: number;
  unchanged: number;
  rejected: number;
  /** months registered as ERE that the aggregation left alone */
  registered_left_alone: number;
  /** months delivered by the CPO (source 'cpo') that the aggregation left alone */
  cpo_left_alone: number;
  /**
   * months this run created or changed that now wait under a capacity hold (D32: the part above the connection's
   * capacity counts only once an operator accepts it), plus open months written before holds existed and held now (D113)
   */
  held_over_capacity: number;
  /** accounts with more than one active connection: their chargers cannot be placed (logged) */
  ambiguous_accounts: number;
}

/** A full recompute of every connection (operators, tests); the scheduled job runs incrementally. */
export function recomputeAllMonthlyEnergy(deps: Deps): Promise<AggregateSummary> {
  return aggregateMonthlyEnergy(deps, { full: true });
}

const emptySummary = (): AggregateSummary => ({
  mode: 'incremental', connections: 0, months_recomputed: 0, connections_full: 0,
  created: 0, updated: 0, unchanged: 0, rejected: 0,
  registered_left_alone: 0, cpo_left_alone: 0, held_over_capacity: 0, ambiguous_accounts: 0,
});

/** Runs fn in a transaction of its own (commits as the run goes), or in the caller's when handed one. */
type InTransaction = (fn: (tdeps: Deps) => Promise<void>) => Promise<void>;

/**
 * One run of the aggregation, under its advisory lock (two runs never double-write; the second returns skipped).
 * Called with a transaction as deps.db (tests, the aggregation benchmark), the whole run happens in it, under the
 * same lock taken for the transaction.
 */
export async function aggregateMonthlyEnergy(deps: Deps, opts: AggregateOptions = {}): Promise<AggregateSummary> {
  const skipped = { ...emptySummary(), skipped: 'locked' as const };
  if (deps.db.isTransaction) {
    const lock = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${LOCK_NAMESPACE}, hashtext(${AGGREGATE_LOCK_NAME})) as ok`.execute(deps.db);
    if (!lock.rows[0]?.ok) return skipped;
    return runAggregation(deps, opts, (fn) => fn(deps));
  }
  // the whole run on the connection that holds the lock: one backend, and one connection of the pool
  const r = await withAdvisoryLock(
    deps.db,
    deps.dbKind,
    AGGREGATE_LOCK_NAME,
    (held) => runAggregation({ ...deps, db: held }, opts, (fn) => held.transaction().execute((trx) => fn({ ...deps, db: trx }))),
    { wait: false },
  );
  return r.acquired ? r.value : skipped;
}

async function runAggregation(deps: Deps, opts: AggregateOptions, inTransaction: InTransaction): Promise<AggregateSummary> {
  const summary = emptySummary();
  // The next run's watermark: this run's start on the database's clock less the margin, kept as text at PostgreSQL's
  // microsecond precision (a JavaScript Date would cut it to the millisecond, and a row written in the cut-off
  // fraction would be taken as changed again by the next run).
  const margin = opts.safetyMarginSeconds ?? WATERMARK_SAFETY_MARGIN_SECONDS;
  const nextSince = (await sql<{ at: string }>`select (now() - make_interval(secs => ${margin}))::text as at`.execute(deps.db)).rows[0]!.at;
  const watermark = await deps.db.selectFrom('energy_aggregate_watermark').selectAll().where('id', '=', 1).executeTakeFirst();
  const full = opts.full === true || !watermark;
  summary.mode = full ? 'full' : 'incremental';
  const nowMonth = monthOf(deps.clock());

  const { plans, ambiguous } = await planAggregation(deps.db, deps.logger, { full, nowMonth });
  summary.ambiguous_accounts = ambiguous;
  // the connections with something to do: months to recompute, or bookkeeping that changed
  const work = plans.filter((p) => p.full || p.months.size > 0 || bookkeepingOf(p, nowMonth) !== null);
  const chunk = Math.max(1, opts.chunkConnections ?? AGGREGATE_CHUNK_CONNECTIONS);
  for (let i = 0; i < work.length; i += chunk) {
    const part = work.slice(i, i + chunk);
    await inTransaction(async (tdeps) => {
      for (const p of part) await aggregateConnection(tdeps, p, nowMonth, summary);
      for (const p of part) await keepBookkeeping(tdeps, p, nowMonth);
    });
    await opts.onChunk?.(i + part.length, work.length);
  }
  // D113: a month still open above its connection's capacity without a hold (written before holds existed) is held
  await inTransaction(async (tdeps) => {
    summary.held_over_capacity += await holdMonthsOverCapacity(tdeps);
  });
  await deps.db
    .insertInto('energy_aggregate_watermark')
    .values({ id: 1, since: sql<Date>`${nextSince}::timestamptz`, now_month: nowMonth })
    .onConflict((oc) => oc.column('id').doUpdateSet({ since: sql<Date>`${nextSince}::timestamptz`, now_month: nowMonth, updated_at: sql`now()` }))
    .execute();
  return summary;
}

/** One connection's recomputed months, offered to the write path together; the outcome counted in the summary. */
async function aggregateConnection(deps: Deps, p: ConnPlan, nowMonth: string, summary: AggregateSummary): Promise<void> {
  if (!p.full && p.months.size === 0) return;
  if (p.full) summary.connections_full += 1;
  const totals = await connectionTotals(deps, p, nowMonth);
  if (totals.size === 0) return; // no OCPP energy and nothing OCPP wrote before: CPO-only connections
  summary.connections += 1;
  const inputs: RecordEnergyInput[] = [];
  for (const [month, t] of [...totals].sort(([a], [b]) => a.localeCompare(b))) {
    if (month > nowMonth) {
      p.skipped.push(month); // readings stamped in the future wait for their month
      continue;
    }
    summary.months_recomputed += 1;
    inputs.push({ connectionId: p.connectionId, month, wh: t.wh, sessions: t.sessions, source: 'ocpp' });
  }
  // the connection's months in one write (a handful of statements however many months)
  const written: string[] = [];
  for (const r of await recordMonthlyEnergies(deps, inputs)) {
    if (r.leftAlone === 'registered') summary.registered_left_alone += 1;
    else if (r.leftAlone === 'cpo') summary.cpo_left_alone += 1;
    else summary[r.status] += 1;
    if ((r.status === 'created' || r.status === 'updated') && r.energyMonthId && !r.leftAlone) written.push(r.energyMonthId);
  }
  // D204: what this run held is what an operator needs to hear from it (it counted only the D113 fix-up before)
  if (written.length > 0) {
    const held = await deps.db.selectFrom('energy_months').select((eb) => eb.fn.countAll<string>().as('n')).where('id', 'in', written).where('hold_status', '=', 'held').executeTakeFirstOrThrow();
    summary.held_over_capacity += Number(held.n);
  }
}

/**
 * The months of one connection to offer to the write path: its whole history or the marked months. A month the
 * aggregation wrote before that has no energy now (readings re-flagged, a lapsed machtiging) goes to 0.
 */
async function connectionTotals(deps: Deps, p: ConnPlan, nowMonth: string): Promise<Map<string, MonthTotal>> {
  const from = p.from ?? undefined;
  const q = deps.db.selectFrom('energy_months').select(['month', 'source']).where('connection_id', '=', p.connectionId);
  if (p.full) {
    const totals = p.from === null ? new Map<string, MonthTotal>() : await monthlyChargerEnergy(deps, p.chargerIds, from);
    for (const e of await q.execute()) if (e.source === 'ocpp' && !totals.has(e.month)) totals.set(e.month, { wh: 0n, sessions: 0 });
    return totals;
  }
  const totals = new Map<string, MonthTotal>();
  const months = [...p.months].sort();
  const known = new Map((await q.where('month', 'in', months).execute()).map((e) => [e.month, e]));
  for (const month of months) {
    if (month > nowMonth) {
      p.skipped.push(month); // the split needs no work before the month arrives
      continue;
    }
    const t = p.from === null ? undefined : await oneMonthChargerEnergy(deps, p.chargerIds, month, from);
    if (t) totals.set(month, t);
    else if (known.get(month)?.source === 'ocpp') totals.set(month, { wh: 0n, sessions: 0 });
  }
  return totals;
}

/** The connection's fingerprint and future months when they changed, else null. */
function bookkeepingOf(p: ConnPlan, nowMonth: string): { pf: string | null; pt: string | null } | null {
  const keep = p.stored && !p.full ? [p.stored.pending_from, p.stored.pending_to] : [null, null];
  const future = [...p.skipped];
  if (keep[0] && keep[1] && keep[1] > nowMonth) future.push(keep[0] > nowMonth ? keep[0] : nextMonth(nowMonth), keep[1]);
  future.sort();
  const pf = future[0] ?? null;
  const pt = future[future.length - 1] ?? null;
  const s = p.stored;
  if (s && s.fingerprint === p.fingerprint && s.pending_from === pf && s.pending_to === pt) return null;
  return { pf, pt };
}

/** The connection's fingerprint and future months, written only where they changed. */
async function keepBookkeeping(deps: Deps, p: ConnPlan, nowMonth: string): Promise<void> {
  const b = bookkeepingOf(p, nowMonth);
  if (!b) return;
  const { pf, pt } = b;
  await deps.db
    .insertInto('energy_aggregate_connections')
    .values({ connection_id: p.connectionId, fingerprint: p.fingerprint, pending_from: pf, pending_to: pt })
    .onConflict((oc) => oc.column('connection_id').doUpdateSet({ fingerprint: p.fingerprint, pending_from: pf, pending_to: pt, updated_at: sql`now()` }))
    .execute();
}
