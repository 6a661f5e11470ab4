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

type Session = SessionSpan & { energy_wh?: string };

/** The month all of a session's register points lie in, or null when they span months (or it has none). */
function onlyMonthOf(s: Session): string | null {
  if (!s.first_reading_at || !s.last_reading_at) return null;
  const first = s.start_point_wh !== null && s.started_at < s.first_reading_at ? s.started_at : s.first_reading_at;
  const m = monthOf(first);
  return m === monthOf(s.last_reading_at) ? m : null;
}

/**
 * Per-month energy and session counts of the given sessions. With `from` (the machtiging's moment) only the Wh at or
 * after it count, and a session counts when any of its Wh count; without it every counted step and every session
 * (the all-chargers figures of GET /energy). A session counts once, in the Amsterdam month it started.
 *
 * With `sessionRows` (GET /energy's all-chargers figures, D133), a session whose points all lie in one month takes its
 * counted energy from its row (`energy_wh`, the same steps the split counts, kept by the gateway with every reading)
 * instead of reading its readings: only sessions across a month boundary are read. The aggregation, which writes the
 * months, reads every session's readings.
 */
async function sessionsEnergy(deps: Deps, sessions: Session[], from?: Date, opts: { sessionRows?: boolean } = {}): Promise<Map<string, MonthTotal>> {
  const out = new Map<string, MonthTotal>();
  if (sessions.length === 0) return out;
  const rowMonth = new Map<string, string>();
  if (opts.sessionRows && from === undefined) {
    for (const s of sessions) {
      const m = s.energy_wh !== undefined ? onlyMonthOf(s) : null;
      if (m !== null) rowMonth.set(s.id, m);
    }
  }
  const points = await registerPointsOf(deps.db, rowMonth.size ? sessions.filter((s) => !rowMonth.has(s.id)) : sessions);
  const wh = new Map<string, bigint>();
  for (const s of sessions) {
    const m0 = rowMonth.get(s.id);
    const own = m0 !== undefined ? new Map(BigInt(s.energy_wh!) > 0n ? [[m0, BigInt(s.energy_wh!)]] : []) : splitSessionByMonth(points.get(s.id) ?? [], new Map(), from);
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
export async function monthlyChargerEnergy(deps: Deps, chargerIds: string[], from?: Date, opts: { sessionRows?: boolean } = {}): Promise<Map<string, MonthTotal>> {
  if (chargerIds.length === 0) return new Map();
  const sessions = await deps.db.selectFrom('charging_sessions').select([...SESSION_SPAN_COLUMNS, 'energy_wh']).where('charger_id', 'in', chargerIds).execute();
  return sessionsEnergy(deps, sessions, from, opts);
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
