// Fleet mode (issue 5 item 3): N charge points against one central system, ramped up at a given rate, then a
// workload (`load`: a transaction per charger with MeterValues at a fleet-wide message rate, or any scenario
// per charger), optionally a storm (every connection drops at once, every charger reconnects and boots), and
// a summary: connections held, messages/s, errors, ack latency p50/p99, energy delivered.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { ChargePoint, describeRejection, sleep, type ChargePointOptions, type Protocol, type Quirk } from './charge-point.ts';
import { defaultQuirks, playScenario, type ScenarioName, type ScenarioParams } from './scenarios/index.ts';
import { percentile, Stats, type StatsSnapshot } from './stats.ts';
import { loadWorkload } from './load-workload.ts';
import type { Credential } from './register.ts';

export type FleetWorkload = 'load' | 'idle' | ScenarioName;

export interface FleetOptions {
  url: string;
  protocol: Protocol;
  credentials: Credential[];
  vendor?: string;
  model?: string;
  firmware?: string;
  connectors?: number;
  quirks?: Quirk[];
  stopTransactionData?: boolean;
  insecure?: boolean;
  /** source address of every connection of this fleet */
  localAddress?: string;
  /** chargers started per second (default 50) */
  rampPerSecond?: number;
  workload?: FleetWorkload;
  /** load: MeterValues per second for the whole fleet; 0 = as fast as acknowledged (one in flight per charger) */
  ratePerSecond?: number;
  /** load/idle: how long the workload runs (s); default 10 */
  durationS?: number;
  /** load: each charger starts its transaction at its own phase of the period instead of all at once */
  spreadStarts?: boolean;
  /**
   * load: the share (0–1) of periodic readings sent a second time as soon as they are answered, as a charger does
   * that missed the answer (a replay; on top of the rate, its answer counted as any MeterValues'); default 0
   */
  replayShare?: number;
  /**
   * load: no transactions; each charger sends its idle connector's register reading (`Sample.Clock`, outside any
   * transaction, as a MID meter reports between sessions) at the fleet-wide rate instead
   */
  idleReadings?: boolean;
  /** load: simulated seconds between readings (the energy per reading follows from the power); default 60 */
  meterIntervalS?: number;
  powerW?: number;
  /** pause between the ramp and the workload (connections held idle), e.g. to sample server memory */
  holdS?: number;
  /**
   * awaited after the ramp, before the hold and the workload: a benchmark running several driver processes starts
   * their workloads together, so each one's steady window is the same and none measures another's start
   */
  beforeWorkload?: () => Promise<void>;
  /** drop every connection at once after the workload and measure the reconnect + boot */
  storm?: boolean;
  /** spread the reconnects over up to this many ms (0 = all at once, the worst case) */
  stormJitterMs?: number;
  scenarioParams?: ScenarioParams;
  callTimeoutMs?: number;
  /** progress callback (every progressMs, default 1000) */
  onProgress?: (line: ProgressLine) => void;
  progressMs?: number;
  /** phase callback: 'connected' once the ramp is done (the benchmark samples server memory then) */
  /**
   * Phases of a run, for a benchmark that samples the server between them. In the load workload, `steady-start` is
   * sent once every charger's transaction start was answered and `steady-end` one second before the first stop can come
   * (the workload's end, or with spreadStarts the start of its last period): between them only the periodic readings
   * (and heartbeats) flow. Both carry the cumulative `meter_values_acked` of this driver.
   */
  onPhase?: (phase: 'connected' | 'workload-start' | 'steady-start' | 'steady-end' | 'workload-done' | 'storm-done', data: Record<string, unknown>) => void;
  log?: (line: string) => void;
  /** every OCPP frame of every charger (--verbose) */
  frames?: (line: string) => void;
  /** keep each charger's meter between runs; a fleet keeps none unless asked (a benchmark runs thousands) */
  stateDir?: string;
  signal?: AbortSignal;
}

export interface ProgressLine {
  elapsedS: number;
  connected: number;
  booted: number;
  target: number;
  messagesPerSecond: number;
  errors: number;
  p50: number | null;
  p99: number | null;
  /** the slowest ack of the interval (ms) */
  max?: number | null;
  /** this driver's longest event-loop delay in the interval (ms): an ack read late is not the server's doing */
  loopMaxMs?: number;
  phase: string;
}

export interface FleetSummary {
  url: string;
  protocol: string;
  workload: string;
  count: number;
  connected_peak: number;
  booted: number;
  connect_failures: number;
  ramp_s: number;
  workload_s: number;
  messages: StatsSnapshot;
  meter_values_acked_in_workload: number;
  meter_values_per_second: number;
  /** ack latency of the workload's MeterValues / TransactionEvent only */
  meter_values_ack_latency_ms: { p50: number | null; p99: number | null; samples: number };
  /** those latencies themselves (up to the stats reservoir), so the figures of several driver processes merge */
  meter_values_latency_sample: number[];
  /** the same between the start burst and the stop burst (steady-start to steady-end): the fleet's steady state */
  meter_values_ack_latency_steady_ms: { p50: number | null; p99: number | null; samples: number };
  /** this driver's own event-loop delay in the steady window (ms): an answer read late is a latency the server did not cause */
  driver_loop_delay_steady_ms?: { p99: number; max: number } | null;
  meter_values_latency_steady_sample: number[];
  /** the workload's MeterValues latencies outside the steady window: acknowledged during the start burst (before
   * every charger's start was answered) and after the steady window closed (the stop burst) */
  meter_values_latency_outside_sample: { before: number[]; after: number[] };
  energy_wh: number;
  /** periodic register readings (Sample.Periodic) the central system acknowledged in the load workload: how many
   * and the sum of their Wh (a decimal string), to compare with what it stored */
  periodic_acked: { count: number; wh_sum: string };
  /**
   * a scenario workload (session, month, …): the sessions that charged and those the central system did not
   * authorise (id tag not Accepted; each also in `errors`)
   */
  sessions?: { charged: number; rejected: number };
  storm?: {
    dropped: number;
    rebooted: number;
    failed: number;
    reconnect_boot_ms: number;
    p50_ms: number | null;
    p99_ms: number | null;
  };
  errors: string[];
}

export function formatProgress(p: ProgressLine): string {
  const ms = (v: number | null) => (v === null ? '-' : `${v.toFixed(1)} ms`);
  return `[${p.elapsedS.toFixed(0).padStart(4)} s] ${p.phase.padEnd(8)} connected ${p.connected}/${p.target}  booted ${p.booted}  msg/s ${p.messagesPerSecond.toFixed(0).padStart(5)}  errors ${p.errors}  ack p50 ${ms(p.p50)}  p99 ${ms(p.p99)}`;
}

export async function runFleet(o: FleetOptions): Promise<FleetSummary> {
  const stats = new Stats();
  const log = o.log ?? (() => {});
  const workload = o.workload ?? 'load';
  const count = o.credentials.length;
  const quirks = o.quirks ?? (workload === 'quirks' ? defaultQuirks(o.protocol) : []);
  const cps = o.credentials.map((c) => {
    const opts: ChargePointOptions = {
      url: o.url,
      identity: c.identity,
      password: c.password,
      protocol: o.protocol,
      connectors: o.connectors ?? 1,
      quirks,
      stats,
      log,
      callTimeoutMs: o.callTimeoutMs ?? 30_000,
      // a fleet must not reconnect behind the workload's back: the storm is driven explicitly
      autoReconnect: false,
      ...(o.stopTransactionData === false ? { stopTransactionData: false } : {}),
      ...(o.insecure ? { insecure: true } : {}),
      ...(o.localAddress ? { localAddress: o.localAddress } : {}),
      ...(o.vendor ? { vendor: o.vendor } : {}),
      ...(o.model ? { model: o.model } : {}),
      ...(o.firmware ? { firmware: o.firmware } : {}),
      ...(o.frames ? { frames: o.frames } : {}),
      ...(o.stateDir ? { stateDir: o.stateDir } : {}),
    };
    return new ChargePoint(opts);
  });

  let phase = 'ramp';
  const t0 = performance.now();
  let peak = 0;
  const progressLoop = monitorEventLoopDelay({ resolution: 10 });
  progressLoop.enable();
  const progress = setInterval(() => {
    peak = Math.max(peak, stats.connected);
    const w = stats.takeWindow();
    const loopMaxMs = progressLoop.count > 0 ? Math.round(progressLoop.max / 1e6) : 0;
    progressLoop.reset();
    o.onProgress?.({
      elapsedS: (performance.now() - t0) / 1000,
      connected: stats.connected,
      booted: stats.booted,
      target: count,
      messagesPerSecond: w.perSecond,
      errors: stats.errors,
      p50: w.p50,
      p99: w.p99,
      max: w.max,
      loopMaxMs,
      phase,
    });
  }, o.progressMs ?? 1000);
  progress.unref();

  const aborted = () => o.signal?.aborted ?? false;
  // the run is stopped (a signal): every charger's boot retry wait ends, a scenario's transaction is stopped (D196)
  const interrupt = () => {
    for (const cp of cps) cp.interrupt();
  };
  o.signal?.addEventListener('abort', interrupt, { once: true });
  try {
    // ── ramp-up ──
    const ramp = Math.max(1, o.rampPerSecond ?? 50);
    const started: Array<Promise<boolean>> = [];
    for (let i = 0; i < count && !aborted(); i++) {
      const cp = cps[i]!;
      started.push(
        cp.start().then(
          () => true,
          (err) => {
            stats.recordError(`${cp.opts.identity} connect/boot: ${(err as Error).message}`);
            return false;
          },
        ),
      );
      const due = t0 + ((i + 1) * 1000) / ramp;
      const wait = due - performance.now();
      // behind the ramp's schedule, the next charger still waits for the event loop to turn: starting the rest in
      // one synchronous run would leave every answer (and every upgrade's handshake) unread until it ended
      if (wait > 0) await sleep(wait, o.signal);
      else await new Promise<void>((resolve) => setImmediate(resolve));
    }
    const ok = await Promise.all(started);
    const rampS = (performance.now() - t0) / 1000;
    peak = Math.max(peak, stats.connected);
    const live = cps.filter((_, i) => ok[i]);
    o.onPhase?.('connected', { connected: stats.connected, booted: stats.booted, count });
    if (o.beforeWorkload) {
      phase = 'waiting';
      await o.beforeWorkload();
    }
    if (o.holdS) {
      phase = 'hold';
      await sleep(o.holdS * 1000, o.signal);
    }

    // ── workload ──
    phase = workload;
    o.onPhase?.('workload-start', {});
    const w0 = performance.now();
    const mvBefore = stats.meterValuesAcked;
    const ackedBefore = stats.acked;
    stats.startPhase();
    const durationMs = (o.durationS ?? 10) * 1000;
    let energy = 0;
    let sessions: FleetSummary['sessions'];
    const rejections: string[] = [];
    const periodic = { count: 0, wh: 0n };
    const loopDelay: { steady: FleetSummary['driver_loop_delay_steady_ms'] } = { steady: null };
    if (workload === 'load') {
      energy = await loadWorkload(live, o, durationMs, stats, periodic, loopDelay);
    } else if (workload === 'idle') {
      await sleep(durationMs, o.signal);
    } else if (workload !== 'storm') {
      // a single-charger scenario on every charger, on the connection the ramp-up booted (boot: its heartbeat)
      const results = await Promise.all(
        live.map((cp) =>
          playScenario(workload, cp, o.scenarioParams ?? {}).catch((err) => {
            stats.recordError(`${cp.opts.identity} ${workload}: ${(err as Error).message}`);
            return undefined;
          }),
        ),
      );
      energy = results.reduce((s, r) => s + (r?.energyWh ?? 0), 0);
      // boot plays no session: no sessions line
      if (workload !== 'boot') sessions = { charged: 0, rejected: 0 };
      for (const r of results) {
        if (!sessions) break;
        if (!r) continue;
        sessions.charged += r.charged;
        sessions.rejected += r.rejected.length;
        for (const x of r.rejected) rejections.push(`${r.identity}: ${describeRejection(x)}`);
      }
    }
    const workloadS = (performance.now() - w0) / 1000;
    const mvAcked = stats.meterValuesAcked - mvBefore;
    const mvLatency = stats.endPhase();
    const mvSample = stats.phaseSample();
    const steadySample = stats.steadySample();
    const outsideSample = stats.outsideSample();
    o.onPhase?.('workload-done', { meter_values_acked: mvAcked, messages_acked: stats.acked - ackedBefore, seconds: workloadS });

    // ── storm ──
    let storm: FleetSummary['storm'];
    if ((o.storm || workload === 'storm') && !aborted()) {
      phase = 'storm';
      const up = live.filter((cp) => cp.connected);
      await Promise.all(up.map((cp) => cp.goOffline()));
      const s0 = performance.now();
      const jitter = o.stormJitterMs ?? 0;
      const times: number[] = [];
      const back = await Promise.all(
        up.map(async (cp) => {
          if (jitter > 0) await sleep(Math.random() * jitter);
          try {
            await cp.goOnline({ boot: true });
            times.push(performance.now() - s0);
            return true;
          } catch (err) {
            stats.recordError(`${cp.opts.identity} storm reconnect: ${(err as Error).message}`);
            return false;
          }
        }),
      );
      times.sort((a, b) => a - b);
      const pct = (p: number) => (times.length ? Math.round(times[Math.min(times.length - 1, Math.ceil((p / 100) * times.length) - 1)]!) : null);
      storm = {
        dropped: up.length,
        rebooted: back.filter(Boolean).length,
        failed: back.filter((b) => !b).length,
        reconnect_boot_ms: Math.round(performance.now() - s0),
        p50_ms: pct(50),
        p99_ms: pct(99),
      };
      o.onPhase?.('storm-done', storm);
    }

    phase = 'closing';
    const snapshot = stats.snapshot();
    await Promise.all(cps.map((cp) => cp.close()));
    return {
      url: o.url,
      protocol: o.protocol,
      workload,
      count,
      connected_peak: peak,
      booted: live.length,
      connect_failures: count - live.length,
      ramp_s: Math.round(rampS * 100) / 100,
      workload_s: Math.round(workloadS * 100) / 100,
      messages: snapshot,
      meter_values_acked_in_workload: mvAcked,
      meter_values_per_second: Math.round((mvAcked / Math.max(0.001, workloadS)) * 10) / 10,
      meter_values_ack_latency_ms: mvLatency,
      meter_values_latency_sample: mvSample,
      meter_values_ack_latency_steady_ms: { p50: percentile(steadySample, 50), p99: percentile(steadySample, 99), samples: steadySample.length },
      meter_values_latency_steady_sample: steadySample,
      meter_values_latency_outside_sample: outsideSample,
      driver_loop_delay_steady_ms: loopDelay.steady,
      energy_wh: energy,
      periodic_acked: { count: periodic.count, wh_sum: periodic.wh.toString() },
      ...(sessions ? { sessions } : {}),
      ...(storm ? { storm } : {}),
      errors: [...stats.lastErrors, ...rejections.slice(0, 20)],
    };
  } finally {
    o.signal?.removeEventListener('abort', interrupt);
    clearInterval(progress);
    progressLoop.disable();
    await Promise.all(cps.map((cp) => cp.close().catch(() => {})));
  }
}

export function identitiesFor(prefix: string, count: number, start = 1): string[] {
  const width = String(start + count - 1).length;
  return Array.from({ length: count }, (_, i) => `${prefix}${String(start + i).padStart(width, '0')}`);
}

