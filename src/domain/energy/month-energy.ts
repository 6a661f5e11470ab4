// The per-month energy step of the aggregation (C4.7, C5.4): the Wh and sessions of a set of chargers per
// Amsterdam month, from their sessions' register readings, split at month boundaries and at the signing moment by
// the one counting rule (ere/counting.ts).
import type { Deps } from '../../deps.ts';
import { monthEnd, monthOf, monthStart } from '../../lib/amsterdam-time.ts';
import { registerPointsOf, SESSION_SPAN_COLUMNS, type SessionSpan } from '../charging/register-points.ts';
import { splitSessionByMonth, totalWh } from '../ere/counting.ts';

export interface MonthTotal {
  wh: bigint;
  sessions: number;
}

type Session = SessionSpan;

/**
 * Per-month energy and session counts of the given sessions. With `from` (the machtiging's moment) only the Wh at or
 * after it count, and a session counts when any of its Wh count; without it every counted step and every session
 * (the all-chargers figures of GET /energy). A session counts once, in the Amsterdam month it started.
 */
async function sessionsEnergy(deps: Deps, sessions: Session[], from?: Date): Promise<Map<string, MonthTotal>> {
  const out = new Map<string, MonthTotal>();
  if (sessions.length === 0) return out;
  const points = await registerPointsOf(deps.db, sessions);
  const wh = new Map<string, bigint>();
  for (const s of sessions) {
    const own = splitSessionByMonth(points.get(s.id) ?? [], new Map(), from);
    for (const [m, v] of own) wh.set(m, (wh.get(m) ?? 0n) + v);
    if (from !== undefined && totalWh(own) <= 0n) continue;
    const m = monthOf(s.started_at);
    const t = out.get(m) ?? { wh: 0n, sessions: 0 };
    t.sessions += 1;
    out.set(m, t);
  }
  for (const [month, v] of wh) out.set(month, { wh: v, sessions: out.get(month)?.sessions ?? 0 });
  return out;
}

/** Per-month energy of the chargers given over their whole history (counted from `from` when given). */
export async function monthlyChargerEnergy(deps: Deps, chargerIds: string[], from?: Date): Promise<Map<string, MonthTotal>> {
  if (chargerIds.length === 0) return new Map();
  const sessions = await deps.db.selectFrom('charging_sessions').select(SESSION_SPAN_COLUMNS).where('charger_id', 'in', chargerIds).execute();
  return sessionsEnergy(deps, sessions, from);
}

/**
 * The total of ONE month of the chargers given, exactly as monthlyChargerEnergy would give it: only the sessions
 * that can contribute are read — those started in the month (session count) and those with a register reading
 * at or after the month's start and one at or before its end (a step overlapping the month). Any other session's
 * steps lie wholly before or after the month.
 */
export async function oneMonthChargerEnergy(deps: Deps, chargerIds: string[], month: string, from?: Date): Promise<MonthTotal | undefined> {
  if (chargerIds.length === 0) return undefined;
  const start = monthStart(month);
  const end = monthEnd(month);
  const sessions = await deps.db
    .selectFrom('charging_sessions as s')
    .select(SESSION_SPAN_COLUMNS.map((c) => `s.${c}` as const))
    .where('s.charger_id', 'in', chargerIds)
    .where((eb) =>
      eb.or([
        eb.and([eb('s.started_at', '>=', start), eb('s.started_at', '<', end)]),
        // a register reading at or after the start and one at or before the end: the session row's span says so
        eb.and([eb('s.last_reading_at', '>=', start), eb('s.first_reading_at', '<=', end)]),
      ]),
    )
    .execute();
  return (await sessionsEnergy(deps, sessions, from)).get(month);
}
