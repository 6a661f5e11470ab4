// C5.1–C5.2 the basis of a user's indicative ERE figures, and kWh at 2 decimals. The figures of a session
// themselves (counts_for_ere, ere_credits, estimated_euro) follow the one counting rule: session-credits.ts.
// The price is the indicative one from configuration (ERE_INDICATIVE_PRICE_EUR); the fee is the user's (userFeePct).
import type { Config } from '../../config.ts';
import { decToNumber, rescale, toDec } from '../../lib/decimal.ts';

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

/** kWh with 2 decimals from integer Wh. */
export function kwhOf(wh: bigint | string | number): number {
  return decToNumber(rescale(BigInt(wh), 3, 2), 2);
}
