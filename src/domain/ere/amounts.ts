// C5.1 amounts in fixed point: ERE at 2 decimals, prices at 3, fee percentages at 2, money in cents.
// One rounding per figure, half away from zero; never binary floats.
import type { Config } from '../../config.ts';
import { divRound, toDec } from '../../lib/decimal.ts';
import { erePerKwhUnits, FACTOR_SCALE } from './factor.ts';

/** ERE (scale 2) of a kWh figure (scale 2) in compliance year Y: kWh × ERE-per-kWh(Y). */
export function ereForKwhUnits(config: Pick<Config, 'RENEWABLE_SHARE'>, year: number, kwhUnits: bigint): bigint {
  return divRound(kwhUnits * erePerKwhUnits(config, year), 10n ** BigInt(FACTOR_SCALE));
}

/** kWh (scale 2) that an ERE figure (scale 2) stands for in year Y: ERE / ERE-per-kWh(Y). */
export function kwhForEreUnits(config: Pick<Config, 'RENEWABLE_SHARE'>, year: number, ereUnits: bigint): bigint {
  const f = erePerKwhUnits(config, year);
  return f === 0n ? 0n : divRound(ereUnits * 10n ** BigInt(FACTOR_SCALE), f);
}

/** Net cents of a gross amount given as ERE×price units (scale 2+3 = 5) after a fee (percent, scale 2). */
export function netCentsOfGross5(gross5: bigint, feeUnits: bigint): bigint {
  return divRound(gross5 * (10_000n - feeUnits), 10_000_000n);
}

/** Net cents of `ere` (scale 2) at `price` (scale 3) after `fee` (scale 2). */
export function netCents(ereUnits: bigint, priceUnits: bigint, feeUnits: bigint): bigint {
  return netCentsOfGross5(ereUnits * priceUnits, feeUnits);
}

/** Weighted average price (scale 3) of gross5 over ere (scale 2); 0 when no ERE. */
export function avgPrice(gross5: bigint, ereUnits: bigint): bigint {
  return ereUnits === 0n ? 0n : divRound(gross5, ereUnits);
}

export const feeUnitsOf = (pct: string | number): bigint => toDec(pct, 2);
export const priceUnitsOf = (p: string | number): bigint => toDec(p, 3);
export const ereUnitsOf = (e: string | number): bigint => toDec(e, 2);
