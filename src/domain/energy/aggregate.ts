// C4.7: the OCPP monthly aggregation. Per active connection and Amsterdam month: the energy of the MID chargers
// of the connection's account, split at month boundaries (split.ts), written through recordMonthlyEnergy
// (source 'ocpp'). Registered months are never touched; a month the CPO delivered itself is left to the CPO;
// re-runs change nothing (the write path answers 'unchanged').
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { ENERGY_REGISTER } from '../charging/readings.ts';
import { monthOf } from './amsterdam-time.ts';
import { recordMonthlyEnergy } from './record-energy.ts';
import { splitSessionByMonth, type RegisterPoint } from './split.ts';

/** Advisory lock of the write phase, apart from the scheduler's own lock on the job name. */
export const AGGREGATE_LOCK = { namespace: 0x454e5247, key: 1 } as const; // 'ENRG'

export interface AggregateSummary {
  skipped?: 'locked';
  connections: number;
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

/** Per-month MID energy of the chargers given, from their sessions' register readings. */
export async function monthlyChargerEnergy(deps: Deps, chargerIds: string[]): Promise<Map<string, MonthTotal>> {
  const out = new Map<string, MonthTotal>();
  if (chargerIds.length === 0) return out;
  const sessions = await deps.db
    .selectFrom('charging_sessions')
    .select(['id', 'started_at'])
    .where('charger_id', 'in', chargerIds)
    .execute();
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

/** One run of the aggregation, inside one transaction holding AGGREGATE_LOCK (two runs never double-write). */
export async function aggregateMonthlyEnergy(deps: Deps): Promise<AggregateSummary> {
  return deps.db.transaction().execute(async (trx) => {
    const tdeps: Deps = { ...deps, db: trx };
    const summary: AggregateSummary = {
      connections: 0, created: 0, updated: 0, unchanged: 0, rejected: 0,
      registered_left_alone: 0, cpo_left_alone: 0, ambiguous_accounts: 0,
    };
    const lock = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${AGGREGATE_LOCK.namespace}, ${AGGREGATE_LOCK.key}) as ok`.execute(trx);
    if (!lock.rows[0]?.ok) return { ...summary, skipped: 'locked' as const };

    const conns = await trx
      .selectFrom('connections')
      .select(['id', 'account_id'])
      .where('status', '=', 'active')
      .orderBy('id') // rows are written in (connection, month) order, as a CPO batch writes them: no deadlock
      .execute();
    const byAccount = new Map<string, string[]>();
    for (const c of conns) byAccount.set(c.account_id, [...(byAccount.get(c.account_id) ?? []), c.id]);
    const nowMonth = monthOf(deps.clock());

    for (const [accountId, connIds] of byAccount) {
      if (connIds.length > 1) {
        summary.ambiguous_accounts += 1;
        deps.logger.warn({ accountId }, 'energy-aggregate: account has several active connections; its chargers are not aggregated');
        continue;
      }
      const connectionId = connIds[0]!;
      const chargers = await trx
        .selectFrom('chargers')
        .select('id')
        .where('account_id', '=', accountId)
        .where('mid_certified', '=', true)
        .execute();
      const totals = await monthlyChargerEnergy(tdeps, chargers.map((c) => c.id));
      const existing = await trx
        .selectFrom('energy_months')
        .select(['month', 'status', 'source'])
        .where('connection_id', '=', connectionId)
        .execute();
      // A month the aggregation wrote before and that now has no energy (readings re-flagged) goes to 0.
      for (const e of existing) {
        if (e.source === 'ocpp' && !totals.has(e.month)) totals.set(e.month, { wh: 0n, sessions: 0 });
      }
      if (totals.size === 0) continue; // no OCPP energy and nothing OCPP wrote before: CPO-only connections
      summary.connections += 1;
      const known = new Map(existing.map((e) => [e.month, e]));
      for (const [month, t] of [...totals].sort(([a], [b]) => a.localeCompare(b))) {
        if (month > nowMonth) continue; // readings stamped in the future wait for their month
        const e = known.get(month);
        if (e?.status === 'registered') {
          summary.registered_left_alone += 1;
          continue;
        }
        if (e?.source === 'cpo') {
          summary.cpo_left_alone += 1;
          continue;
        }
        const r = await recordMonthlyEnergy(tdeps, { connectionId, month, wh: t.wh, sessions: t.sessions, source: 'ocpp' });
        summary[r.status] += 1;
      }
    }
    return summary;
  });
}
