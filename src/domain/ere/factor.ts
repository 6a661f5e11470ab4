// C5.1: ERE per kWh for compliance year Y = renewable_share[Y] × 183 g/MJ × 3.6 MJ/kWh / 1000.
// Everything in fixed-point bigint (src/lib/decimal.ts); no binary float arithmetic.
import type { Config } from '../../config.ts';
import { divRound, toDec } from '../../lib/decimal.ts';

/** Scale of the ERE-per-kWh factor: 0.505 × 0.6588 = 0.332694 → kept at 6 decimals. */
export const FACTOR_SCALE = 6;

/** renewable_share of year Y, or of the latest configured year before it. */
export function renewableShare(config: Pick<Config, 'RENEWABLE_SHARE'>, year: number): string {
  const years = Object.keys(config.RENEWABLE_SHARE).map(Number).sort((a, b) => a - b);
  const y = [...years].reverse().find((k) => k <= year) ?? years[0];
  if (y === undefined) throw new Error('RENEWABLE_SHARE has no year');
  return config.RENEWABLE_SHARE[y]!;
}

/** ERE per kWh at FACTOR_SCALE: share × 183 × 3.6 / 1000 = share × 0.6588. */
export function erePerKwhUnits(config: Pick<Config, 'RENEWABLE_SHARE'>, year: number): bigint {
  const share = toDec(renewableShare(config, year), 9); // share at 1e-9
  // × 0.6588 (= 6588 / 10^4) then from scale 13 down to FACTOR_SCALE
  return divRound(share * 6588n, 10n ** BigInt(9 + 4 - FACTOR_SCALE));
}

/** ERE for an energy in Wh, at scale 6 (kWh = Wh/1000). */
export function ereForWh(config: Pick<Config, 'RENEWABLE_SHARE'>, year: number, wh: bigint): bigint {
  // wh (scale 3 in kWh) × factor (scale 6) → scale 9, down to 6
  return divRound(wh * erePerKwhUnits(config, year), 1000n);
}
