// The fleet's `load` workload (simulator/load.ts runs it between the ramp-up and the storm): one transaction per
// charger, periodic MeterValues at a fleet-wide rate, optionally spread over each charger's own phase, and the
// marks of the steady window a benchmark measures between the start and the stop of every transaction.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sleep, type ChargePoint } from './charge-point.ts';
import type { FleetOptions, FleetSummary } from './load.ts';
import type { Stats } from './stats.ts';

/**
 * One transaction per charger; readings with simulated timestamps (starting a month back, one meter interval
 * apart, so they are plausible and in the past) sent at the fleet-wide rate, or closed-loop when rate is 0.
 * Returns the energy delivered (Wh).
 */
export async function loadWorkload(
  cps: ChargePoint[],
  o: FleetOptions,
  durationMs: number,
  stats: Stats,
  periodic: { count: number; wh: bigint },
  loopDelay: { steady: FleetSummary['driver_loop_delay_steady_ms'] },
): Promise<number> {
  const interval = o.meterIntervalS ?? 60;
  const powerW = o.powerW ?? 7400;
  const stepWh = Math.max(1, Math.floor((powerW * interval) / 3600));
  const rate = o.ratePerSecond ?? 0;
  const replayShare = o.replayShare ?? 0;
  const end = performance.now() + durationMs;
  const base = Date.now() - 30 * 86_400_000;
  let begun = 0;
  // each charger's share of the fleet rate, started at a random phase so the load is smooth
  const periodMs = rate > 0 ? (cps.length * 1000) / rate : 0;
  // spreadStarts: each charger starts its transaction at its phase of the first period and, when the workload is
  // longer than two periods, stops it at its phase of the last, as a fleet does in life (not the whole fleet's
  // StartTransaction, or StopTransaction, in the same second)
  const spreadStarts = (o.spreadStarts ?? false) && periodMs > 0;
  const spreadStops = spreadStarts && durationMs > 2 * periodMs;
  const loop = monitorEventLoopDelay({ resolution: 10 });
  const steadyEnd = setTimeout(() => {
    if (loop.count > 0) loopDelay.steady = { p99: Math.round(loop.percentile(99) / 1e6), max: Math.round(loop.max / 1e6) };
    loop.disable();
    stats.markSteady('end');
    o.onPhase?.('steady-end', { meter_values_acked: stats.meterValuesAcked });
  }, Math.max(0, (spreadStops ? durationMs - periodMs : durationMs) - 1000));
  const idle = o.idleReadings ?? false;
  const begin = (cp: ChargePoint, at: Date) =>
    (idle ? Promise.resolve(null) : cp.beginTx({ connectorId: 1, idTag: 'SIMLOAD1', at })).finally(() => {
      if (++begun !== cps.length) return;
      loop.enable();
      stats.markSteady('start');
      o.onPhase?.('steady-start', { meter_values_acked: stats.meterValuesAcked });
    });
  const perCharger = async (cp: ChargePoint, index: number): Promise<number> => {
    // a transaction's readings: each charger a second of its own; idle readings are clock-aligned (Sample.Clock):
    // on the meter interval's boundaries (whole minutes at the default 60 s), as a charger's aligned data is
    let t = idle ? Math.floor(base / (interval * 1000)) * interval * 1000 : base + (index % 3600) * 1000;
    const phaseMs = periodMs > 0 ? Math.random() * periodMs : 0;
    if (spreadStarts) await sleep(phaseMs, o.signal);
    const stopAt = spreadStops ? end - periodMs + phaseMs : end;
    const tx = await begin(cp, new Date(t));
    let wh = tx?.meterStartWh ?? cp.register(1);
    let next = performance.now() + (spreadStarts ? periodMs : phaseMs);
    while (performance.now() < stopAt && cp.connected && !(o.signal?.aborted ?? false)) {
      if (periodMs > 0) {
        const wait = next - performance.now();
        if (wait > 0) await sleep(Math.min(wait, stopAt - performance.now()), o.signal);
        if (performance.now() >= stopAt) break;
        next += periodMs;
      }
      t += interval * 1000;
      try {
        if (tx) {
          wh += stepWh;
          await cp.txMeter(tx, wh, new Date(t), powerW);
        } else {
          await cp.meterValuesIdle(1, new Date(t), 'Sample.Clock');
        }
        periodic.count += 1;
        periodic.wh += BigInt(wh);
        // a charger that missed the answer sends the same reading again (stored once; not counted twice above)
        if (tx && replayShare > 0 && Math.random() < replayShare) await cp.txMeter(tx, wh, new Date(t), powerW);
      } catch {
        /* counted */
      }
    }
    if (!cp.connected || !tx) return 0;
    t += interval * 1000;
    await cp.endTx(tx, wh, new Date(t), 'Local');
    return wh - tx.meterStartWh;
  };
  const results = await Promise.all(
    cps.map((cp, i) =>
      perCharger(cp, i).catch((err) => {
        stats.recordError(`${cp.opts.identity} load: ${(err as Error).message}`);
        return 0;
      }),
    ),
  );
  clearTimeout(steadyEnd);
  loop.disable();
  return results.reduce((a, b) => a + b, 0);
}
