// C5.4 for the Personal views of sessions (GET /sessions, GET /chargers current_session): which of a session's Wh
// count for ERE, by the one counting rule (ere/counting.ts), and the indicative ERE and euro of those Wh only.
// kwh stays the session's plausible energy; a session that started before the machtiging was signed counts from
// the signing moment on, split at the register value at that instant.
import type { Deps } from '../../deps.ts';
import { decToNumber, rescale } from '../../lib/decimal.ts';
import { feeUnitsOf, netCents, priceUnitsOf } from '../ere/amounts.ts';
import { accountsCountFrom, chargerCountsFrom, ereOfCounted, splitSessionByMonth, totalWh } from '../ere/counting.ts';
import { localParts } from '../../lib/amsterdam-time.ts';
import { ereForWh } from '../ere/factor.ts';
import { registerPointsOf, registerSpansOf } from './register-points.ts';

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
  const year = (d: Date) => localParts(d).year;
  // Only a session that spans the signing moment or a new year needs its register points split; one wholly after
  // the signing moment counts its counted energy (energy_wh) whole, in the year it was charged.
  const whole = (s: { id: string }, since: Date) => {
    const span = spans.get(s.id);
    return span !== undefined && span.first_reading_at.getTime() >= since.getTime() && year(span.first_reading_at) === year(span.last_reading_at) ? span : undefined;
  };
  const split = counting.filter((s) => {
    const span = spans.get(s.id);
    return span !== undefined && span.last_reading_at.getTime() > chargerCountsFrom(s, from)!.getTime() && !whole(s, chargerCountsFrom(s, from)!);
  });
  const points = await registerPointsOf(deps.db, split.map((s) => spans.get(s.id)!));
  const price = priceUnitsOf(deps.config.ERE_INDICATIVE_PRICE_EUR);
  const fee = feeUnitsOf(feePct);
  for (const s of sessions) {
    const since = chargerCountsFrom(s, from);
    if (since === null) {
      out.set(s.id, NONE);
      continue;
    }
    const w = whole(s, since);
    const byMonth = w ? undefined : splitSessionByMonth(points.get(s.id) ?? [], new Map(), since);
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
