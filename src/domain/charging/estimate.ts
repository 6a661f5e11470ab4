// C5.1–C5.2 indicative ERE figures of a session: ere_credits and estimated_euro, in fixed-point decimals.
// The price is the indicative one from configuration (ERE_INDICATIVE_PRICE_EUR); the fee is the user's (userFeePct).
import type { Config } from '../../config.ts';
import { decToNumber, rescale, toDec } from '../../lib/decimal.ts';
import { feeUnitsOf, netCents, priceUnitsOf } from '../ere/amounts.ts';
import { ereForWh } from '../ere/factor.ts';
import { localParts } from '../../lib/amsterdam-time.ts';

export interface EstimateBasis {
  price_per_ere: number;
  effective_fee_pct: number;
}

/** The basis of a user's estimates: the indicative price (configuration) and the fee that applies to them. */
export function estimateBasis(config: Pick<Config, 'ERE_INDICATIVE_PRICE_EUR'>, feePct: string): EstimateBasis {
  return {
    price_per_ere: decToNumber(toDec(config.ERE_INDICATIVE_PRICE_EUR, 3), 3),
    effective_fee_pct: decToNumber(toDec(feePct, 2), 2),
  };
}

/** The compliance year of a moment: the Europe/Amsterdam calendar year (C6.8). */
export function complianceYear(at: Date): number {
  return localParts(at).year;
}

/**
 * ERE credits (2 decimals) and the indicative net euro value (2 decimals) of `wh` charged in `year`:
 * the ERE shown, at the indicative price, less the user's fee — the same arithmetic as the ERE ledger
 * (src/domain/ere/amounts.ts). A session that does not count for ERE has 0 of both.
 */
export function estimateSession(
  config: Pick<Config, 'RENEWABLE_SHARE' | 'ERE_INDICATIVE_PRICE_EUR'>,
  s: { wh: bigint; year: number; countsForEre: boolean; feePct: string },
): { ere_credits: number; estimated_euro: number } {
  if (!s.countsForEre || s.wh <= 0n) return { ere_credits: 0, estimated_euro: 0 };
  const ere2 = rescale(ereForWh(config, s.year, s.wh), 6, 2);
  const cents = netCents(ere2, priceUnitsOf(config.ERE_INDICATIVE_PRICE_EUR), feeUnitsOf(s.feePct));
  return { ere_credits: decToNumber(ere2, 2), estimated_euro: decToNumber(cents, 2) };
}

/** kWh with 2 decimals from integer Wh. */
export function kwhOf(wh: bigint | string | number): number {
  return decToNumber(rescale(BigInt(wh), 3, 2), 2);
}
