// Counters and ack-latency samples shared by one charge point or a whole fleet. Latencies are kept in a
// bounded reservoir (the summary) and a per-window list (the live progress line), so memory stays flat.

const RESERVOIR = 200_000;

export interface StatsSnapshot {
  connected: number;
  booted: number;
  sent: number;
  acked: number;
  errors: number;
  meter_values_acked: number;
  queued: number;
  ack_latency_ms: { p50: number | null; p99: number | null; max: number | null; samples: number };
}

export function percentile(sorted: ArrayLike<number>, p: number): number | null {
  if (sorted.length === 0) return null;
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx] ?? null;
}

const round = (n: number | null) => (n === null ? null : Math.round(n * 100) / 100);

export class Stats {
  connected = 0;
  booted = 0;
  sent = 0;
  acked = 0;
  errors = 0;
  meterValuesAcked = 0;
  queued = 0;
  /** last error messages (bounded), for the report */
  lastErrors: string[] = [];
  private samples = new Float64Array(RESERVOIR);
  private sampleCount = 0;
  private seen = 0;
  private window: number[] = [];
  /** MeterValues/TransactionEvent ack latencies since startPhase() (the load workload's own figure) */
  private phase: number[] = [];
  private phaseOn = false;
  /** where the steady window (load workload: after the start burst, before the stop burst) begins and ends in `phase` */
  private steadyFrom: number | undefined;
  private steadyTo: number | undefined;
  private steadyCopy: number[] = [];
  /** the phase's MeterValues acknowledged before the steady window opened and after it closed (the two bursts) */
  private outsideCopy: { before: number[]; after: number[] } = { before: [], after: [] };
  private windowAcked = 0;
  private windowStart = performance.now();

  recordAck(method: string, ms: number): void {
    this.acked++;
    this.windowAcked++;
    if (method === 'MeterValues' || method === 'TransactionEvent') this.meterValuesAcked++;
    this.seen++;
    if (this.sampleCount < RESERVOIR) this.samples[this.sampleCount++] = ms;
    else {
      const j = Math.floor(Math.random() * this.seen);
      if (j < RESERVOIR) this.samples[j] = ms;
    }
    if (this.window.length < 50_000) this.window.push(ms);
    if (this.phaseOn && (method === 'MeterValues' || method === 'TransactionEvent') && this.phase.length < RESERVOIR) this.phase.push(ms);
  }

  startPhase(): void {
    this.phase = [];
    this.phaseOn = true;
    this.steadyFrom = undefined;
    this.steadyTo = undefined;
  }

  /** marks the start or the end of the steady window within the phase */
  markSteady(at: 'start' | 'end'): void {
    if (at === 'start') this.steadyFrom = this.phase.length;
    else if (this.steadyFrom !== undefined) this.steadyTo = this.phase.length;
  }

  /** p50/p99 of the meter-value acks since startPhase(), and stop collecting */
  endPhase(): { p50: number | null; p99: number | null; samples: number } {
    this.phaseOn = false;
    // taken before the phase is sorted below: until then its samples are in the order they were acknowledged
    this.steadyCopy =
      this.steadyFrom !== undefined && this.steadyTo !== undefined ? this.phase.slice(this.steadyFrom, this.steadyTo).sort((a, b) => a - b).map(round3) : [];
    this.outsideCopy = {
      before: this.steadyFrom !== undefined ? this.phase.slice(0, this.steadyFrom).map(round3) : [],
      after: this.steadyTo !== undefined ? this.phase.slice(this.steadyTo).map(round3) : [],
    };
    const sorted = this.phase.sort((a, b) => a - b);
    return { p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)), samples: sorted.length };
  }

  /** the meter-value ack latencies acknowledged within the steady window of the last phase (ms, sorted; empty when it never closed) */
  steadySample(): number[] {
    return this.steadyCopy;
  }

  /** the meter-value ack latencies of the last phase acknowledged before its steady window and after it (ms) */
  outsideSample(): { before: number[]; after: number[] } {
    return this.outsideCopy;
  }

  /** the meter-value ack latencies collected in the last phase (ms, sorted) */
  phaseSample(): number[] {
    return this.phase.map(round3);
  }

  recordError(what: string): void {
    this.errors++;
    if (this.lastErrors.length < 20) this.lastErrors.push(what);
  }

  snapshot(): StatsSnapshot {
    const sorted = Array.from(this.samples.subarray(0, this.sampleCount)).sort((a, b) => a - b);
    return {
      connected: this.connected,
      booted: this.booted,
      sent: this.sent,
      acked: this.acked,
      errors: this.errors,
      meter_values_acked: this.meterValuesAcked,
      queued: this.queued,
      ack_latency_ms: {
        p50: round(percentile(sorted, 50)),
        p99: round(percentile(sorted, 99)),
        max: round(sorted.length ? sorted[sorted.length - 1]! : null),
        samples: this.seen,
      },
    };
  }

  /** acks per second and latency percentiles since the previous call (the live progress line) */
  takeWindow(): { perSecond: number; p50: number | null; p99: number | null; max: number | null } {
    const now = performance.now();
    const secs = Math.max(0.001, (now - this.windowStart) / 1000);
    const sorted = this.window.sort((a, b) => a - b);
    const out = { perSecond: this.windowAcked / secs, p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)), max: round(sorted.length ? sorted[sorted.length - 1]! : null) };
    this.window = [];
    this.windowAcked = 0;
    this.windowStart = now;
    return out;
  }
}

const round3 = (ms: number) => Math.round(ms * 1000) / 1000;
