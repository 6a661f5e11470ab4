// The dirty-month plan of the aggregation (C4.7, docs/energy.md "Incremental runs"): which connections are
// aggregated, with which MID chargers and from which signing moment (C5.4), and which of their months changed
// since the watermark. A connection whose inputs changed (account, MID charger set, signing moment) is recomputed
// over its whole history.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Logger } from 'pino';
import { monthOf, monthRange } from '../../lib/amsterdam-time.ts';
import { mandateFrom } from '../ere/counting.ts';

export interface ConnPlan {
  connectionId: string;
  accountId: string;
  chargerIds: string[];
  /** C5.4: energy counts from this moment (the machtiging in force); null = none of it counts */
  from: Date | null;
  fingerprint: string;
  stored?: { fingerprint: string; pending_from: string | null; pending_to: string | null };
  /** recompute the whole history */
  full: boolean;
  /** months to recompute (incremental) */
  months: Set<string>;
  /** future months skipped in this run (picked up once they arrive) */
  skipped: string[];
}


/**
 * The connections to aggregate (active, the only active connection of their account), in connection id order, each
 * with its MID chargers, its signing moment and what to recompute. `ambiguous` counts accounts with several active
 * connections: their chargers cannot be placed and are left out (logged).
 */
export async function planAggregation(
  trx: Db,
  logger: Logger,
  opts: { full: boolean; nowMonth: string },
): Promise<{ plans: ConnPlan[]; ambiguous: number }> {
  const conns = await trx
    .selectFrom('connections')
    .select(['id', 'account_id', 'mandate_status', 'mandate_valid_from'])
    .where('status', '=', 'active')
    .orderBy('id') // rows are written in (connection, month) order, as a CPO batch writes them: no deadlock
    .execute();
  const byAccount = new Map<string, typeof conns>();
  for (const c of conns) byAccount.set(c.account_id, [...(byAccount.get(c.account_id) ?? []), c]);
  const plans = new Map<string, ConnPlan>();
  let ambiguous = 0;
  for (const [accountId, list] of byAccount) {
    if (list.length > 1) {
      ambiguous += 1;
      logger.warn({ accountId }, 'energy-aggregate: account has several active connections; its chargers are not aggregated');
      continue;
    }
    const c = list[0]!;
    plans.set(c.id, { connectionId: c.id, accountId, chargerIds: [], from: mandateFrom(c), fingerprint: '', full: opts.full, months: new Set(), skipped: [] });
  }
  const byAccountPlan = new Map([...plans.values()].map((p) => [p.accountId, p]));
  const chargerPlan = new Map<string, ConnPlan>();
  if (byAccountPlan.size > 0) {
    const chargers = await trx
      .selectFrom('chargers')
      .select(['id', 'account_id'])
      .where('mid_certified', '=', true)
      .where('account_id', 'is not', null)
      .orderBy('id')
      .execute();
    for (const ch of chargers) {
      const p = byAccountPlan.get(ch.account_id!);
      if (!p) continue;
      p.chargerIds.push(ch.id);
      chargerPlan.set(ch.id, p);
    }
  }
  for (const p of plans.values()) p.fingerprint = `${p.accountId}:${p.from?.toISOString() ?? '-'}:${p.chargerIds.join(',')}`;

  const stored = await trx.selectFrom('energy_aggregate_connections').select(['connection_id', 'fingerprint', 'pending_from', 'pending_to']).execute();
  const gone: string[] = [];
  for (const row of stored) {
    const p = plans.get(row.connection_id);
    if (!p) gone.push(row.connection_id); // archived or ambiguous now: not aggregated (rows stay as they are)
    else p.stored = row;
  }
  if (gone.length > 0) await trx.deleteFrom('energy_aggregate_connections').where('connection_id', 'in', gone).execute();
  if (!opts.full) await markChangedMonths(trx, plans, chargerPlan, opts.nowMonth);
  return { plans: [...plans.values()].sort((a, b) => a.connectionId.localeCompare(b.connectionId)), ambiguous };
}

/** Incremental: a changed fingerprint means the whole history; else the arrived future months and the touched sessions' months. */
async function markChangedMonths(trx: Db, plans: Map<string, ConnPlan>, chargerPlan: Map<string, ConnPlan>, nowMonth: string): Promise<void> {
  for (const p of plans.values()) {
    // New connection, or its account, MID charger set or signing moment changed: its whole history.
    if (p.stored?.fingerprint !== p.fingerprint) {
      p.full = true;
      continue;
    }
    // Months that lay in the future at an earlier run and have arrived since.
    const { pending_from: pf, pending_to: pt } = p.stored;
    if (pf && pt && pf <= nowMonth) for (const m of monthRange(pf, pt < nowMonth ? pt : nowMonth)) p.months.add(m);
  }
  // Sessions whose inputs changed since the watermark: every write of a session's row or readings (its start, new
  // readings, offline batches, anomaly flags and reviews via the gateway's recompute) stamps its updated_at, except
  // an ingest batch's update of a running session's readings, which stamps metered_at alone (migrations/0062, D85):
  // so a session changed after the watermark, or is running and was metered after it (the running ones through the
  // partial index charging_sessions_active). The months its register readings span are on the row too
  // (first_reading_at, last_reading_at): no reading is read.
  const since = sql<Date>`(select since from energy_aggregate_watermark where id = 1)`;
  const touched = await trx
    .selectFrom('charging_sessions')
    .select(['id', 'charger_id', 'started_at', 'first_reading_at', 'last_reading_at'])
    .where((eb) => eb.or([eb('updated_at', '>', since), eb.and([eb('status', '=', 'active'), eb('metered_at', '>', since)])]))
    .execute();
  for (const s of touched) {
    const p = chargerPlan.get(s.charger_id);
    if (p?.full !== false) continue;
    p.months.add(monthOf(s.started_at));
    if (s.first_reading_at && s.last_reading_at) for (const m of monthRange(monthOf(new Date(s.first_reading_at)), monthOf(new Date(s.last_reading_at)))) p.months.add(m);
  }
}
