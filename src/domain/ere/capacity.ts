// C5.5 capacity hold: a connection's monthly energy above what one household connection can deliver
// (CONNECTION_MAX_KW × the hours of the Amsterdam month) is held with reason connection_capacity. The month keeps
// what the connection could have delivered in `kwh` (what counts); the excess waits in `held_wh` and counts only
// once an operator accepts it (review.ts). Integer Wh and 0.01 kWh units only.
import type { Config } from '../../config.ts';
import { divRound, formatDec, toDec } from '../../lib/decimal.ts';
import { monthEnd, monthStart } from '../../lib/amsterdam-time.ts';

export type HoldStatus = 'held' | 'accepted' | 'rejected';

/** Wh → units of 0.01 kWh (10 Wh), rounded half away from zero. */
export const whToKwhUnits = (wh: bigint): bigint => divRound(wh, 10n);

/** The hours of an Amsterdam month: 743 in March, 745 in October (daylight saving time), else 24 × days. */
export function monthHours(month: string): bigint {
  return BigInt(Math.round((monthEnd(month).getTime() - monthStart(month).getTime()) / 3_600_000));
}

/** What a connection can deliver in a month, Wh: CONNECTION_MAX_KW × the month's hours. */
export function capacityWh(config: Pick<Config, 'CONNECTION_MAX_KW'>, month: string): bigint {
  return toDec(config.CONNECTION_MAX_KW, 3) * monthHours(month); // kW at 3 decimals = W
}

/** The figures a delivery stores: what counts (kwh) and the excess held above the connection's capacity. */
export interface HoldFigures {
  kwh: string;
  held_wh: string;
  hold_reason: 'connection_capacity' | null;
  hold_status: 'held' | null;
}

/** A delivery of `units` (0.01 kWh; exact `wh` when known) for `month`, with its capacity hold. */
export function holdOf(config: Pick<Config, 'CONNECTION_MAX_KW'>, month: string, units: bigint, wh: bigint | null): HoldFigures {
  const deliveredWh = wh ?? units * 10n;
  const cap = capacityWh(config, month);
  if (deliveredWh <= cap) return { kwh: formatDec(units, 2), held_wh: '0', hold_reason: null, hold_status: null };
  const held = deliveredWh - cap;
  // kwh + the held excess in kWh gives back the delivered kWh exactly (deliveredUnits)
  return { kwh: formatDec(units - whToKwhUnits(held), 2), held_wh: held.toString(), hold_reason: 'connection_capacity', hold_status: 'held' };
}

/** The kWh units a month was delivered with: what counts plus an excess that was not accepted. */
export function deliveredUnits(row: { kwh: string; held_wh: string; hold_status: string | null }): bigint {
  const held = row.hold_status === 'held' || row.hold_status === 'rejected' ? whToKwhUnits(BigInt(row.held_wh)) : 0n;
  return toDec(row.kwh, 2) + held;
}
