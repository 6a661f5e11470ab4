// C4.7: the OCPP monthly aggregation. Per active connection and Amsterdam month: the energy of the MID chargers
// of the connection's account, split at month boundaries (split.ts), written through recordMonthlyEnergy
// (source 'ocpp'). Registered months are never touched; a month the CPO delivered itself is left to the CPO;
// re-runs change nothing (the write path answers 'unchanged').
//
// Incremental (docs/energy.md): a run recomputes only the (connection, month) pairs whose inputs changed since
// the watermark of the last successful run, plus the whole history of a connection whose MID charger set
// changed (fingerprint). No watermark → a full recompute; recomputeAllMonthlyEnergy forces one.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { ENERGY_REGISTER } from '../charging/readings.ts';
import { monthEnd, monthOf, monthStart, nextMonth } from '../../lib/amsterdam-time.ts';
import { recordMonthlyEnergy } from './record-energy.ts';
import { splitSessionByMonth, type RegisterPoint } from './split.ts';

/** Advisory lock of the write phase, apart from the scheduler's own lock on the job name. */
export const AGGREGATE_LOCK = { namespace: 0x454e5247, key: 1 } as const; // 'ENRG'

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
}

export interface AggregateSummary {
  skipped?: 'locked';
  mode: 'full' | 'incremental';
  connections: number;
  /** (connection, month) pairs recomputed and offered to the write path or left alone */
  months_recomputed: number;
  /** connections recomputed over their whole history (full run, new connection, MID charger set changed) */
  connections_full: number;
  created: number;
  updated: number;
  unchanged: number;
  rejected: number;
  /** months registered as ERE that the aggregation left alone */
  registered_left_alone: number;
  /** months delivered by the CPO (source 'cpo') that the aggregation left alone */
  cpo_left_alone: number;
  /** accounts with more than one active connection: their chargers cannot be placed (logged) */
  ambiguous_accounts: number;
}

export interface MonthTotal {
  wh: bigint;
  sessions: number;
}

type Session = { id: string; started_at: Date };

/** Per-month energy and session counts of the given sessions (all their register readings). */
async function sessionsEnergy(deps: Deps, sessions: Session[]): Promise<Map<string, MonthTotal>> {
  const out = new Map<string, MonthTotal>();
  if (sessions.length === 0) return out;
  const readings = await deps.db
    .selectFrom('meter_readings')
    .select(['session_id', 'measured_at', 'wh', 'anomaly'])
    .where('session_id', 'in', sessions.map((s) => s.id))
    .where('measurand', '=', ENERGY_REGISTER)
    .where('phase', '=', '')
    .orderBy('session_id')
    .orderBy('measured_at')
    .orderBy('id')
    .execute();
  const bySession = new Map<string, RegisterPoint[]>();
  for (const r of readings) {
    const list = bySession.get(r.session_id!) ?? [];
    list.push({ at: r.measured_at, wh: BigInt(r.wh), anomaly: r.anomaly !== null });
    bySession.set(r.session_id!, list);
  }
  const wh = new Map<string, bigint>();
  for (const points of bySession.values()) splitSessionByMonth(points, wh);
  for (const [month, v] of wh) out.set(month, { wh: v, sessions: 0 });
  // A session counts once, in the Amsterdam month it started.
  for (const s of sessions) {
    const m = monthOf(s.started_at);
    const t = out.get(m) ?? { wh: 0n, sessions: 0 };
    t.sessions += 1;
    out.set(m, t);
  }
  return out;
}

/** Per-month MID energy of the chargers given, from their sessions' register readings (whole history). */
export async function monthlyChargerEnergy(deps: Deps, chargerIds: string[]): Promise<Map<string, MonthTotal>> {
  if (chargerIds.length === 0) return new Map();
  const sessions = await deps.db
    .selectFrom('charging_sessions')
    .select(['id', 'started_at'])
    .where('charger_id', 'in', chargerIds)
    .execute();
  return sessionsEnergy(deps, sessions);
}

/**
 * The total of ONE month of the chargers given, exactly as monthlyChargerEnergy would give it: only the sessions
 * that can contribute are read — those started in the month (session count) and those with a register reading
 * at or after the month's start and one at or before its end (a step overlapping the month). Any other session's
 * steps lie wholly before or after the month.
 */
export async function oneMonthChargerEnergy(deps: Deps, chargerIds: string[], month: string): Promise<MonthTotal | undefined> {
  if (chargerIds.length === 0) return undefined;
  const from = monthStart(month);
  const to = monthEnd(month);
  const reading = (cmp: '>=' | '<=', at: Date) =>
    sql<boolean>`exists (select 1 from meter_readings r where r.session_id = s.id and r.measurand = ${ENERGY_REGISTER}
      and r.phase = '' and r.measured_at ${sql.raw(cmp)} ${at})`;
  const sessions = await deps.db
    .selectFrom('charging_sessions as s')
    .select(['s.id', 's.started_at'])
    .where('s.charger_id', 'in', chargerIds)
    .where((eb) =>
      eb.or([
        eb.and([eb('s.started_at', '>=', from), eb('s.started_at', '<', to)]),
        eb.and([reading('>=', from), reading('<=', to)]),
      ]),
    )
    .execute();
  return (await sessionsEnergy(deps, sessions)).get(month);
}

/** Months from a to b inclusive ('YYYY-MM' strings compare in time order). */
function monthRange(a: string, b: string): string[] {
  const out: string[] = [];
  for (let m = a; m <= b; m = nextMonth(m)) out.push(m);
  return out;
}

interface ConnState {
  connectionId: string;
  accountId: string;
  chargerIds: string[];
  fingerprint: string;
  stored?: { fingerprint: string; pending_from: string | null; pending_to: string | null };
  /** recompute the whole history */
  full: boolean;
  /** months to recompute (incremental) */
  months: Set<string>;
  /** future months skipped in this run (picked up once they arrive) */
  skipped: string[];
}

/** A full recompute of every connection (operators, tests); the scheduled job runs incrementally. */
export function recomputeAllMonthlyEnergy(deps: Deps): Promise<AggregateSummary> {
  return aggregateMonthlyEnergy(deps, { full: true });
}

/** One run of the aggregation, inside one transaction holding AGGREGATE_LOCK (two runs never double-write). */
export async function aggregateMonthlyEnergy(deps: Deps, opts: AggregateOptions = {}): Promise<AggregateSummary> {
  return deps.db.transaction().execute(async (trx) => {
    const tdeps: Deps = { ...deps, db: trx };
    const summary: AggregateSummary = {
      mode: 'incremental', connections: 0, months_recomputed: 0, connections_full: 0,
      created: 0, updated: 0, unchanged: 0, rejected: 0,
      registered_left_alone: 0, cpo_left_alone: 0, ambiguous_accounts: 0,
    };
    const lock = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${AGGREGATE_LOCK.namespace}, ${AGGREGATE_LOCK.key}) as ok`.execute(trx);
    if (!lock.rows[0]?.ok) return { ...summary, skipped: 'locked' as const };

    // Database time of this transaction's start: rows committed later carry a later now() unless their
    // transaction started earlier, which the safety margin covers.
    const margin = opts.safetyMarginSeconds ?? WATERMARK_SAFETY_MARGIN_SECONDS;
    // Kept in SQL at PostgreSQL's microsecond precision: a JavaScript Date would cut it to the millisecond, and a
    // row written in the cut-off fraction would be taken as changed again by the next run.
    const nextSince = sql<Date>`now() - make_interval(secs => ${margin})`;
    const watermark = await trx.selectFrom('energy_aggregate_watermark').selectAll().where('id', '=', 1).executeTakeFirst();
    const full = opts.full === true || !watermark;
    summary.mode = full ? 'full' : 'incremental';
    const nowMonth = monthOf(deps.clock());

    // What decides which sessions count: active connections of accounts with exactly one, their MID chargers.
    const conns = await trx
      .selectFrom('connections')
      .select(['id', 'account_id'])
      .where('status', '=', 'active')
      .orderBy('id') // rows are written in (connection, month) order, as a CPO batch writes them: no deadlock
      .execute();
    const byAccount = new Map<string, string[]>();
    for (const c of conns) byAccount.set(c.account_id, [...(byAccount.get(c.account_id) ?? []), c.id]);
    const states = new Map<string, ConnState>();
    for (const [accountId, connIds] of byAccount) {
      if (connIds.length > 1) {
        summary.ambiguous_accounts += 1;
        deps.logger.warn({ accountId }, 'energy-aggregate: account has several active connections; its chargers are not aggregated');
        continue;
      }
      states.set(connIds[0]!, { connectionId: connIds[0]!, accountId, chargerIds: [], fingerprint: '', full, months: new Set(), skipped: [] });
    }
    const accountConn = new Map([...states.values()].map((s) => [s.accountId, s]));
    const chargerConn = new Map<string, ConnState>();
    if (accountConn.size > 0) {
      const chargers = await trx
        .selectFrom('chargers')
        .select(['id', 'account_id'])
        .where('mid_certified', '=', true)
        .where('account_id', 'is not', null)
        .orderBy('id')
        .execute();
      for (const ch of chargers) {
        const st = accountConn.get(ch.account_id!);
        if (!st) continue;
        st.chargerIds.push(ch.id);
        chargerConn.set(ch.id, st);
      }
    }
    for (const st of states.values()) st.fingerprint = `${st.accountId}:${st.chargerIds.join(',')}`;

    const stored = await trx.selectFrom('energy_aggregate_connections').select(['connection_id', 'fingerprint', 'pending_from', 'pending_to']).execute();
    const gone: string[] = [];
    for (const row of stored) {
      const st = states.get(row.connection_id);
      if (!st) gone.push(row.connection_id); // archived or ambiguous now: not aggregated (rows stay as they are)
      else st.stored = row;
    }
    if (gone.length > 0) await trx.deleteFrom('energy_aggregate_connections').where('connection_id', 'in', gone).execute();

    if (!full) {
      for (const st of states.values()) {
        // New connection, or its account or MID charger set changed: its whole history.
        if (st.stored?.fingerprint !== st.fingerprint) {
          st.full = true;
          continue;
        }
        // Months that lay in the future at an earlier run and have arrived since.
        const { pending_from: pf, pending_to: pt } = st.stored;
        if (pf && pt && pf <= nowMonth) for (const m of monthRange(pf, pt < nowMonth ? pt : nowMonth)) st.months.add(m);
      }
      // Sessions whose inputs changed since the watermark: the session row (start, new readings and anomaly
      // flags via the gateway's recompute) or a reading received since (offline batches).
      const since = sql<Date>`(select since from energy_aggregate_watermark where id = 1)`;
      const touched = await trx
        .selectFrom('charging_sessions')
        .select(['id', 'charger_id', 'started_at'])
        .where((eb) =>
          eb.or([
            eb('updated_at', '>', since),
            eb('id', 'in', eb.selectFrom('meter_readings').select('session_id').where('received_at', '>', since).where('session_id', 'is not', null)),
          ]),
        )
        .execute();
      const relevant = touched.filter((s) => {
        const st = chargerConn.get(s.charger_id);
        return st !== undefined && !st.full;
      });
      if (relevant.length > 0) {
        const spans = await trx
          .selectFrom('meter_readings')
          .select(['session_id', (eb) => eb.fn.min('measured_at').as('first'), (eb) => eb.fn.max('measured_at').as('last')])
          .where('session_id', 'in', relevant.map((s) => s.id))
          .where('measurand', '=', ENERGY_REGISTER)
          .where('phase', '=', '')
          .groupBy('session_id')
          .execute();
        const spanOf = new Map(spans.map((r) => [r.session_id!, r]));
        for (const s of relevant) {
          const st = chargerConn.get(s.charger_id)!;
          st.months.add(monthOf(s.started_at));
          const span = spanOf.get(s.id);
          if (span) for (const m of monthRange(monthOf(new Date(span.first)), monthOf(new Date(span.last)))) st.months.add(m);
        }
      }
    }

    for (const st of [...states.values()].sort((a, b) => a.connectionId.localeCompare(b.connectionId))) {
      if (!st.full && st.months.size === 0) continue;
      let totals: Map<string, MonthTotal>;
      let existing;
      if (st.full) {
        summary.connections_full += 1;
        totals = await monthlyChargerEnergy(tdeps, st.chargerIds);
        existing = await trx.selectFrom('energy_months').select(['month', 'status', 'source']).where('connection_id', '=', st.connectionId).execute();
        // A month the aggregation wrote before and that now has no energy (readings re-flagged) goes to 0.
        for (const e of existing) if (e.source === 'ocpp' && !totals.has(e.month)) totals.set(e.month, { wh: 0n, sessions: 0 });
      } else {
        totals = new Map();
        const months = [...st.months].sort();
        existing = await trx
          .selectFrom('energy_months')
          .select(['month', 'status', 'source'])
          .where('connection_id', '=', st.connectionId)
          .where('month', 'in', months)
          .execute();
        const known = new Map(existing.map((e) => [e.month, e]));
        for (const month of months) {
          if (month > nowMonth) {
            st.skipped.push(month); // the split needs no work before the month arrives
            continue;
          }
          const t = await oneMonthChargerEnergy(tdeps, st.chargerIds, month);
          if (t) totals.set(month, t);
          else if (known.get(month)?.source === 'ocpp') totals.set(month, { wh: 0n, sessions: 0 });
        }
      }
      await writeConnection(tdeps, st, totals, existing, nowMonth, summary);
    }

    // Bookkeeping, written only where it changed.
    for (const st of states.values()) {
      let pf: string | null = null;
      let pt: string | null = null;
      const keep = st.stored && !st.full ? [st.stored.pending_from, st.stored.pending_to] : [null, null];
      const future = [...st.skipped];
      if (keep[0] && keep[1] && keep[1] > nowMonth) future.push(keep[0] > nowMonth ? keep[0] : nextMonth(nowMonth), keep[1]);
      if (future.length > 0) {
        future.sort();
        pf = future[0]!;
        pt = future[future.length - 1]!;
      }
      const s = st.stored;
      if (s && s.fingerprint === st.fingerprint && s.pending_from === pf && s.pending_to === pt) continue;
      await trx
        .insertInto('energy_aggregate_connections')
        .values({ connection_id: st.connectionId, fingerprint: st.fingerprint, pending_from: pf, pending_to: pt })
        .onConflict((oc) => oc.column('connection_id').doUpdateSet({ fingerprint: st.fingerprint, pending_from: pf, pending_to: pt, updated_at: sql`now()` }))
        .execute();
    }
    await trx
      .insertInto('energy_aggregate_watermark')
      .values({ id: 1, since: nextSince, now_month: nowMonth })
      .onConflict((oc) => oc.column('id').doUpdateSet({ since: nextSince, now_month: nowMonth, updated_at: sql`now()` }))
      .execute();
    return summary;
  });
}

async function writeConnection(
  deps: Deps,
  st: ConnState,
  totals: Map<string, MonthTotal>,
  existing: Array<{ month: string; status: string; source: string }>,
  nowMonth: string,
  summary: AggregateSummary,
): Promise<void> {
  if (totals.size === 0) return; // no OCPP energy and nothing OCPP wrote before: CPO-only connections
  summary.connections += 1;
  const known = new Map(existing.map((e) => [e.month, e]));
  for (const [month, t] of [...totals].sort(([a], [b]) => a.localeCompare(b))) {
    if (month > nowMonth) {
      st.skipped.push(month); // readings stamped in the future wait for their month
      continue;
    }
    summary.months_recomputed += 1;
    const e = known.get(month);
    if (e?.status === 'registered') {
      summary.registered_left_alone += 1;
      continue;
    }
    if (e?.source === 'cpo') {
      summary.cpo_left_alone += 1;
      continue;
    }
    const r = await recordMonthlyEnergy(deps, { connectionId: st.connectionId, month, wh: t.wh, sessions: t.sessions, source: 'ocpp' });
    summary[r.status] += 1;
  }
}
