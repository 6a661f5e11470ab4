// The fleet driver's latency figures: the workload's MeterValues latencies and, within them, the steady window's
// (after every charger's start was answered, before the stops), which bench:ocpp reports beside the whole window.
import { describe, expect, it } from 'vitest';
import { Stats } from '../../simulator/stats.ts';
import { formatOutside, mergeSummaries } from '../../bench/drivers.ts';

describe('Stats steady window', () => {
  it('keeps only the MeterValues acknowledged between the two marks', () => {
    const s = new Stats();
    s.startPhase();
    s.recordAck('StartTransaction', 900); // not a MeterValues: in neither sample
    s.recordAck('MeterValues', 500); // the start burst
    s.markSteady('start');
    for (const ms of [3, 1, 2]) s.recordAck('MeterValues', ms);
    s.recordAck('TransactionEvent', 4);
    s.recordAck('Heartbeat', 50);
    s.markSteady('end');
    s.recordAck('MeterValues', 700); // the stop burst
    const whole = s.endPhase();
    expect(whole.samples).toBe(6);
    expect(whole.p99).toBe(700);
    expect(s.steadySample()).toEqual([1, 2, 3, 4]);
    expect(s.outsideSample()).toEqual({ before: [500], after: [700] });
  });

  it('has no steady sample when the window never closed', () => {
    const s = new Stats();
    s.startPhase();
    s.markSteady('start');
    s.recordAck('MeterValues', 5);
    s.endPhase();
    expect(s.steadySample()).toEqual([]);
    expect(s.outsideSample()).toEqual({ before: [], after: [] });
  });
});

describe('formatOutside', () => {
  it('names how many MeterValues each burst held and their latencies, merged over the drivers', () => {
    expect(formatOutside({ before: [30, 10, 20], after: [] })).toBe(
      '3 before it (the start burst), p50 20 / p99 30 / max 30 ms; none after it (its last second and the stop burst)',
    );
    const part = (before: number[], after: number[]) =>
      ({ meter_values_latency_sample: [], meter_values_latency_steady_sample: [], meter_values_latency_outside_sample: { before, after }, messages: { ack_latency_ms: {} }, periodic_acked: { count: 0, wh_sum: '0' } }) as never;
    const merged = mergeSummaries([part([1], [7]), part([2, 3], [])]);
    expect(merged.meter_values_latency_outside_sample).toEqual({ before: [1, 2, 3], after: [7] });
  });
});

describe('Stats progress window', () => {
  it('reports each interval’s slowest ack beside its p50 and p99, then starts a new interval', () => {
    const s = new Stats();
    for (const ms of [5, 1, 900, 3]) s.recordAck('MeterValues', ms);
    const w = s.takeWindow();
    expect(w.max).toBe(900);
    expect(w.p50).toBeLessThanOrEqual(5);
    const next = s.takeWindow();
    expect(next.max).toBeNull(); // nothing acknowledged since
    expect(next.p99).toBeNull();
  });
});
