// C5.1–C5.2 indicative ERE figures of a session: ere_credits and estimated_euro, in fixed-point decimals.
// Until the ERE ledger exists, price and fee come from configuration (ERE_INDICATIVE_PRICE_EUR, ERE_FEE_PCT).
import type { Config } from '../../config.ts';
import { decToNumber, divRound, rescale, toDec } from '../../lib/decimal.ts';
import { ereForWh } from '../ere/factor.ts';

export interface EstimateBasis {
  price_per_ere: number;
  effective_fee_pct: number;
}

export function estimateBasis(config: Pick<Config, 'ERE_INDICATIVE_PRICE_EUR' | 'ERE_FEE_PCT'>): EstimateBasis {
  return {
    price_per_ere: decToNumber(toDec(config.ERE_INDICATIVE_PRICE_EUR, 3), 3),
    effective_fee_pct: decToNumber(toDec(config.ERE_FEE_PCT, 2), 2),
  };
}

/** The compliance year of a moment: the Europe/Amsterdam calendar year (C6.8). */
export function complianceYear(at: Date): number {
  return Number(new Intl.DateTimeFormat('en', { timeZone: 'Europe/Amsterdam', year: 'numeric' }).format(at));
}

/**
 * ERE credits (2 decimals) and the indicative net euro value (2 decimals) of `wh` charged in `year`.
 * A session that does not count for ERE has 0 of both.
 */
export function estimateSession(
  config: Pick<Config, 'RENEWABLE_SHARE' | 'ERE_INDICATIVE_PRICE_EUR' | 'ERE_FEE_PCT'>,
  s: { wh: bigint; year: number; countsForEre: boolean },
): { ere_credits: number; estimated_euro: number } {
  if (!s.countsForEre || s.wh <= 0n) return { ere_credits: 0, estimated_euro: 0 };
  const ere6 = ereForWh(config, s.year, s.wh); // ERE at 1e-6
  const price3 = toDec(config.ERE_INDICATIVE_PRICE_EUR, 3); // € at 1e-3
  const keep4 = 100n * 10_000n - toDec(config.ERE_FEE_PCT, 4); // percent kept, at 1e-4
  // ere6 × price3 → 1e-9 €, × keep4 / 100 → 1e-13 € ⇒ to cents
  const cents = divRound(ere6 * price3 * keep4, 100n * 10n ** 11n);
  return { ere_credits: decToNumber(rescale(ere6, 6, 2), 2), estimated_euro: decToNumber(cents, 2) };
}

/** kWh with 2 decimals from integer Wh. */
export function kwhOf(wh: bigint | string | number): number {
  return decToNumber(rescale(BigInt(wh), 3, 2), 2);
}
