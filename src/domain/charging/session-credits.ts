// C5.4 for the Personal views of sessions (GET /sessions, GET /chargers current_session): which of a session's Wh
// count for ERE, by the one counting rule (ere/counting.ts), and the indicative ERE and euro of those Wh only.
// kwh stays the session's plausible energy; a session that started before the machtiging was signed counts from
// the signing moment on, split at the register value at that instant.
//
// D124: a session's Wh count only in a month whose monthly row can carry them, so the session views and the months
// agree: not in a month before the first compliance year (never recorded), not in a month the CPO delivered for the
// connection (its figure stands for the month, D98) or one the operator rejected, and in a registered month only the
// Wh its last computation saw (its figure is frozen, C4.7): not readings that arrived later, nor a held step accepted
// later.
import type { Deps } from '../../deps.ts';
import { decToNumber, rescale } from '../../lib/decimal.ts';
import { feeUnitsOf, netCents, priceUnitsOf } from '../ere/amounts.ts';
import { accountsCountFrom, chargerCountsFrom, ereOfCounted, splitSessionByMonth, totalWh } from '../ere/counting.ts';
import { ereForWh } from '../ere/factor.ts';
import { localParts, monthOf, monthRange } from '../../lib/amsterdam-time.ts';
import { FIRST_COMPLIANCE_YEAR } from '../../../schemas/http/ere-position.ts';
import type { Db } from '../../db/database.ts';
import { type ReceivedPoint, registerPointsOf, type RegisterSpan, registerSpansOf } from './register-points.ts';

export interface SessionCredit {
  counts_for_ere: boolean;
  /** the Wh that count for ERE */
  counted_wh: bigint;
  ere_credits: number;
  estimated_euro: number;
}

const NONE: SessionCredit = { counts_for_ere: false, counted_wh: 0n, ere_credits: 0, estimated_euro: 0 };

/**
 * Credits of the given sessions, by session id: counts_for_ere when any of their Wh count (MID charger, eligible
 * account, at or after the machtiging's moment); ERE of the counted Wh at each compliance year's factor (2
 * decimals); estimated_euro = those ERE at the indicative price less the user's fee (cents), as the ledger computes.
 */
export async function sessionCredits(
  deps: Deps,
  sessions: Array<{ id: string; mid: boolean; accountId: string | null }>,
  feePct: string,
): Promise<Map<string, SessionCredit>> {
  const out = new Map<string, SessionCredit>();
  const from = await accountsCountFrom(deps.db, sessions.filter((s) => s.mid && s.accountId).map((s) => s.accountId!));
  const counting = sessions.filter((s) => chargerCountsFrom(s, from) !== null);
  const spans = await registerSpansOf(deps.db, counting.map((s) => s.id));
  const stands = await monthStandsOf(
    deps.db,
    counting.map((s) => s.accountId!),
    counting.flatMap((s) => (spans.has(s.id) ? monthsOf(spans.get(s.id)!) : [])),
  );
  const standOf = (s: { accountId: string | null }, month: string) => monthStand(stands, s.accountId!, month);
  const year = (d: Date) => localParts(d).year;
  // Only a session that spans the signing moment or a new year, or has Wh in a month whose row decides otherwise,
  // needs its register points split; one wholly after the signing moment counts its counted energy (energy_wh)
  // whole, in the year it was charged.
  const whole = (s: { id: string; accountId: string | null }, since: Date) => {
    const span = spans.get(s.id);
    return span !== undefined &&
      span.first_reading_at.getTime() >= since.getTime() &&
      year(span.first_reading_at) === year(span.last_reading_at) &&
      monthsOf(span).every((m) => standOf(s, m) === 'counts')
      ? span
      : undefined;
  };
  const split = counting.filter((s) => {
    const span = spans.get(s.id);
    return span !== undefined && span.last_reading_at.getTime() > chargerCountsFrom(s, from)!.getTime() && !whole(s, chargerCountsFrom(s, from)!);
  });
  const needsArrival = split.some((s) => monthsOf(spans.get(s.id)!).some((m) => standOf(s, m) instanceof Date));
  const points = await registerPointsOf(deps.db, split.map((s) => spans.get(s.id)!), { received: needsArrival });
  const price = priceUnitsOf(deps.config.ERE_INDICATIVE_PRICE_EUR);
  const fee = feeUnitsOf(feePct);
  for (const s of sessions) {
    const since = chargerCountsFrom(s, from);
    if (since === null) {
      out.set(s.id, NONE);
      continue;
    }
    const w = whole(s, since);
    const byMonth = w ? undefined : countedByMonth(points.get(s.id) ?? [], since, (m) => standOf(s, m));
    const wh = w ? w.energyWh : totalWh(byMonth!);
    if (wh <= 0n) {
      out.set(s.id, NONE);
      continue;
    }
    const ere2 = rescale(w ? ereForWh(deps.config, year(w.first_reading_at), wh) : ereOfCounted(deps.config, byMonth!), 6, 2);
    out.set(s.id, { counts_for_ere: true, counted_wh: wh, ere_credits: decToNumber(ere2, 2), estimated_euro: decToNumber(netCents(ere2, price, fee), 2) });
  }
  return out;
}

/** What a month's row says of a session's Wh in it: they count, they do not, or only those received by this moment. */
type MonthStand = 'counts' | 'not' | Date;

interface StandRow {
  account_id: string;
  month: string;
  source: string;
  status: string;
  computed_at: Date;
}

/** The monthly rows of the accounts' active connections in the given months, by account and month. */
async function monthStandsOf(db: Db, accountIds: string[], months: string[]): Promise<Map<string, StandRow>> {
  const out = new Map<string, StandRow>();
  const accounts = [...new Set(accountIds)];
  const ms = [...new Set(months)];
  if (accounts.length === 0 || ms.length === 0) return out;
  const rows = await db
    .selectFrom('energy_months as em')
    .innerJoin('connections as c', 'c.id', 'em.connection_id')
    .select(['c.account_id', 'em.month', 'em.source', 'em.status', 'em.computed_at'])
    .where('c.account_id', 'in', accounts)
    .where('c.status', '=', 'active')
    .where('em.month', 'in', ms)
    .execute();
  for (const r of rows) out.set(`${r.account_id}|${r.month}`, r);
  return out;
}

function monthStand(stands: Map<string, StandRow>, accountId: string, month: string): MonthStand {
  if (month < `${FIRST_COMPLIANCE_YEAR}-01`) return 'not'; // never recorded (D103)
  const row = stands.get(`${accountId}|${month}`);
  if (!row) return 'counts'; // not aggregated yet: pending, as the next run will record it
  if (row.source === 'cpo' || row.status === 'rejected') return 'not';
  if (row.status === 'registered') return row.computed_at; // frozen at what its last computation saw
  return 'counts';
}

/** The months a session's register points lie in (a start point at started_at may begin it a month earlier). */
function monthsOf(span: RegisterSpan): string[] {
  const first = span.start_point_wh !== null && span.started_at < span.first_reading_at ? span.started_at : span.first_reading_at;
  return monthRange(monthOf(first), monthOf(span.last_reading_at));
}

/**
 * The counted Wh of one session's points per month (the counting rule from `since`), each month as its row says: a
 * registered month holds what its last computation saw, the session's points as they were then (a reading that
 * arrived later is not among them, so a late reading inside a step moves nothing and a late step adds nothing; a
 * step accepted later was held then).
 */
function countedByMonth(points: ReceivedPoint[], since: Date, stand: (month: string) => MonthStand): Map<string, bigint> {
  const all = splitSessionByMonth(points, new Map(), since);
  const out = new Map<string, bigint>();
  for (const [m, wh] of all) {
    const st = stand(m);
    if (st === 'counts') out.set(m, wh);
    else if (st instanceof Date) {
      const then = points
        .filter((p) => p.receivedAt === undefined || p.receivedAt.getTime() <= st.getTime())
        .map((p) => (p.acceptedAt !== undefined && p.acceptedAt.getTime() > st.getTime() ? { ...p, held: true, doubtful: p.ownFlag === true } : p));
      out.set(m, splitSessionByMonth(then, new Map(), since).get(m) ?? 0n);
    }
  }
  return out;
}
