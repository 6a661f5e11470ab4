// C4.7: energy of a session's register readings per Amsterdam month, in integer Wh. A step between two
// consecutive readings that crosses a month boundary is split at the register value at the boundary, linearly
// interpolated between the readings around it (bigint math, rounded half away from zero).
import { divRound } from '../../lib/decimal.ts';
import { monthBoundariesBetween, monthOf } from '../../lib/amsterdam-time.ts';

export interface RegisterPoint {
  at: Date;
  wh: bigint;
  /** the reading carries an anomaly (meter_readings.anomaly not null) */
  anomaly: boolean;
}

/**
 * Per-month Wh of one session. Points must be in time order. The rule for anomalies is the gateway's own
 * (src/domain/charging/readings.ts): the step that ENDS at a flagged reading is held out of ERE (a backward
 * register or an implausible jump), and the flagged reading is still the base of the next step, so energy
 * after a meter reset counts again. A step never yields negative energy.
 */
export function splitSessionByMonth(points: RegisterPoint[], into = new Map<string, bigint>()): Map<string, bigint> {
  for (let i = 1; i < points.length; i++) {
    const p = points[i - 1]!;
    const q = points[i]!;
    if (q.anomaly) continue;
    const step = q.wh - p.wh;
    if (step <= 0n) continue;
    const t0 = BigInt(p.at.getTime());
    const span = BigInt(q.at.getTime()) - t0;
    let segStart = p.at;
    let regStart = p.wh;
    for (const b of span > 0n ? monthBoundariesBetween(p.at, q.at) : []) {
      const regB = p.wh + divRound(step * (BigInt(b.getTime()) - t0), span);
      add(into, monthOf(segStart), regB - regStart);
      segStart = b;
      regStart = regB;
    }
    add(into, monthOf(segStart), q.wh - regStart);
  }
  return into;
}

function add(m: Map<string, bigint>, month: string, wh: bigint): void {
  m.set(month, (m.get(month) ?? 0n) + wh);
}
