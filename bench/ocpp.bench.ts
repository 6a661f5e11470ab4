// `npm run bench:ocpp -- [--count N] [--duration S] [--rate R] [--ramp R] [--protocol P] [--targets gateway,bare] [--repeat N] [--db-waits] [--history-months N] [--json]`
// Fleet run: `npm run bench:ocpp -- --chargers 50000 --workers 3 --rate 833 --ramp 250 --duration 300 --skip-storm --spread-starts --targets gateway`
//   (--chargers is --count; --workers runs the gateway with WORKERS=N on PostgreSQL; the driver is split over
//   --drivers processes, at least one per 12,500 chargers, each with its own source address in 127.0.0.0/8).
//
// Measures the gateway against a bare ocpp-rpc server that only acknowledges (the reference), under the same
// fleet load driven from a separate process (the simulator's fleet mode, simulator/cli.ts), loopback only:
//   connections held, MeterValues acknowledged per second, ack latency p50/p99, server RSS per connection,
//   and how long the fleet takes to reconnect and boot after a storm (every connection dropped at once);
// then the ratio gateway/bare. Every phase is bounded; it stops by itself.
// The gateway runs on PGlite, or on a fresh database created next to DATABASE_URL (dropped afterwards).
import { fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { FleetSummary, ProgressLine } from '../simulator/load.ts';
import { formatProgress } from '../simulator/load.ts';
import { QUIRKS, type Quirk } from '../simulator/charge-point-types.ts';
import { driverCount, formatOutside, mergeSummaries, share, sourceAddress, splitCsv } from './drivers.ts';
import { DbWaitSampler, formatTableUpdates, formatWal, formatWaits, serverCpuBetween, summariseWaits, tableUpdatesBetween, walBetween, type WaitSummary, type WalDelta } from './db-waits.ts';
import { roundOrder, summariseRatios } from './rounds.ts';
import { startNodeFlags } from './start-flags.ts';
import { runBench } from './bench-service.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');

const { values: a } = parseArgs({
  options: {
    count: { type: 'string', default: '500' },
    chargers: { type: 'string' },
    workers: { type: 'string', default: '1' },
    drivers: { type: 'string' },
    'skip-storm': { type: 'boolean', default: false },
    'spread-starts': { type: 'boolean', default: false },
    'replay-share': { type: 'string', default: '0' },
    'idle-readings': { type: 'boolean', default: false },
    // the chargers' firmware quirks (simulator --quirks), e.g. no-txid: in-session readings without a transaction id
    quirks: { type: 'string' },
    duration: { type: 'string', default: '20' },
    rate: { type: 'string', default: '0' },
    ramp: { type: 'string', default: '200' },
    protocol: { type: 'string', default: 'ocpp1.6' },
    targets: { type: 'string', default: 'gateway,bare' },
    // runs the servers N times, alternating which goes first, and summarises each ratio by its median and range
    repeat: { type: 'string', default: '1' },
    'timeout-s': { type: 'string', default: '900' },
    json: { type: 'boolean', default: false },
    // samples what the gateway's statements wait for in PostgreSQL (pg_stat_activity every 100 ms, db-waits.ts)
    'db-waits': { type: 'boolean', default: false },
    // the gateway's database as after N months in service: N more monthly partitions of meter_readings (bench/history.ts)
    'history-months': { type: 'string', default: '0' },
    // counts the gateway's SQL statements (one process) in the steady window and the storm, by statement
    statements: { type: 'boolean', default: false },
    // writes a V8 CPU profile of each server child (node --cpu-prof) into this directory
    profile: { type: 'string' },
    // with --profile: the driver processes write a profile too
    'profile-drivers': { type: 'boolean', default: false },
    // records each server process (one process: not a clustered gateway) with Linux perf over the steady window into
    // this directory, native frames included (what --profile cannot name: V8's collector, libuv, the kernel); the
    // server runs with --perf-basic-prof so that its JavaScript frames are named too. Read with `perf report -i FILE`
    perf: { type: 'string' },
    // writes every driver's progress line (each second: acks per second, p50/p99/slowest ack of that second, the
    // driver's own longest event-loop delay) and the phase marks into this file, one JSON object per line with the
    // seconds since the benchmark started and the wall-clock time (to line up with other per-second records)
    timeline: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (a.help) {
  process.stdout.write(
    'npm run bench:ocpp -- [--count 500] [--duration 20] [--rate 0 (closed loop) | MeterValues/s] [--ramp 200] [--protocol ocpp1.6|ocpp2.0.1] [--replay-share 0] [--idle-readings] [--quirks no-txid,…] [--targets gateway,bare] [--repeat 1] [--profile DIR] [--perf DIR] [--json]\n',
  );
  process.exit(0);
}
const count = Number(a.chargers ?? a.count);
const workers = Number(a.workers);
const drivers = driverCount(count, a.drivers !== undefined ? Number(a.drivers) : undefined);
const targets = a.targets!.split(',').map((t) => t.trim()) as Array<'gateway' | 'bare'>;
const repeat = Number(a.repeat);
if (!Number.isInteger(repeat) || repeat < 1) {
  process.stderr.write('--repeat takes a whole number of rounds, at least 1\n');
  process.exit(2);
}
if (a['db-waits'] && !process.env.DATABASE_URL) {
  // without it the gateway runs on PGlite, inside its own process: there is no pg_stat_activity to sample
  process.stderr.write('--db-waits samples PostgreSQL: set DATABASE_URL (the gateway runs on PGlite without it)\n');
  process.exit(2);
}
const historyMonths = Number(a['history-months']);
if (!Number.isInteger(historyMonths) || historyMonths < 0 || historyMonths > 600) {
  process.stderr.write('--history-months takes a whole number of months, 0 to 600\n');
  process.exit(2);
}
const unknownQuirks = (a.quirks ?? '').split(',').map((q) => q.trim()).filter((q) => q !== '' && !QUIRKS.includes(q as Quirk));
if (unknownQuirks.length > 0) {
  process.stderr.write(`--quirks takes a comma list of ${QUIRKS.join(', ')} (not ${unknownQuirks.join(', ')})\n`);
  process.exit(2);
}
const tty = process.stderr.isTTY && !a.json;
const benchStart = performance.now();
const timeline = a.timeline ? fs.createWriteStream(path.resolve(a.timeline)) : null;
const mark = (entry: Record<string, unknown>) => timeline?.write(JSON.stringify({ t: Math.round(performance.now() - benchStart) / 1000, at: Date.now(), ...entry }) + '\n');
const say = (line: string) => {
  if (!a.json) process.stderr.write(line + '\n');
};

interface TargetResult {
  target: string;
  db: string;
  /** server CPU (user + system) per MeterValues acknowledged in the workload window, µs */
  cpu_us_per_call: number | null;
  /** the same per message of any kind acknowledged in the window (starts, stops, heartbeats included), µs */
  cpu_us_per_message: number | null;
  /**
   * server CPU per MeterValues between the start burst and the stop burst (from the moment every charger's
   * transaction start was answered to one second before the workload ends): the fleet's steady state, µs
   */
  cpu_us_per_call_steady: number | null;
  /** periodic readings acknowledged to the driver and stored by the gateway (null for the bare server) */
  readings: { acked: number; stored: number | null; lost: number | null; wh_match: boolean | null };
  rss_before_mb: number;
  rss_connected_mb: number;
  rss_per_connection_kb: number | null;
  /** --db-waits: the gateway's statements' waits of 100 ms or more in PostgreSQL, in the steady and the workload window */
  db_waits: {
    steady: WaitSummary[];
    workload: WaitSummary[];
    wal_steady: WalDelta | null;
    wal_workload: WalDelta | null;
    /** charging_sessions' updates in the steady window and how many were heap-only (no index entry written) */
    session_updates_steady: { updates: number; hot: number } | null;
    /** PostgreSQL's own CPU (its processes on this machine) per MeterValues in the steady window, µs; null when not seen */
    server_cpu_us_per_call_steady: number | null;
  } | null;
  summary: FleetSummary;
}

/** CPU seconds over a window as µs per call (null without a measurement or calls). */
const perCall = (cpu: { cpu_s: number } | null, calls: number) => (cpu && calls > 0 ? Math.round((cpu.cpu_s * 1e6) / calls) : null);

function waitMessage<T>(child: ChildProcess, type: string, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out waiting for ${type}`)), timeoutMs);
    const onMsg = (m: any) => {
      if (m?.type === type) {
        clearTimeout(t);
        child.off('message', onMsg);
        resolve(m as T);
      }
    };
    child.on('message', onMsg);
    child.once('exit', (code) => {
      clearTimeout(t);
      reject(new Error(`child exited (${code}) before ${type}`));
    });
  });
}

async function cpuOf(server: ChildProcess): Promise<number> {
  const p = waitMessage<{ us: number }>(server, 'cpu', 30_000);
  server.send({ cmd: 'cpu' });
  return (await p).us;
}

async function storedOf(server: ChildProcess): Promise<{ count: number; wh_sum: string } | null> {
  const p = waitMessage<{ stored: { count: number; wh_sum: string } | null }>(server, 'stored', 120_000);
  server.send({ cmd: 'stored' });
  return (await p).stored;
}

type Counts = Record<string, number>;
async function statementsOf(server: ChildProcess): Promise<Counts> {
  const p = waitMessage<{ statements: Counts }>(server, 'statements', 30_000);
  server.send({ cmd: 'statements' });
  return (await p).statements;
}

/** the statements counted between two snapshots, most frequent first, per unit (a MeterValues, a charger) */
function statementReport(title: string, before: Counts | undefined, after: Counts | undefined, units: number, unit: string): void {
  if (!before || !after || units <= 0) return;
  const diff = Object.entries(after)
    .map(([k, n]) => [k, n - (before[k] ?? 0)] as const)
    .filter(([, n]) => n > 0)
    .sort((x, y) => y[1] - x[1]);
  const total = diff.reduce((s, [, n]) => s + n, 0);
  say(`   statements ${title}: ${total} for ${units} ${unit}s = ${(total / units).toFixed(3)} per ${unit}`);
  for (const [k, n] of diff.slice(0, 15)) say(`     ${(n / units).toFixed(3).padStart(8)}  ${k}`);
}

/**
 * The gateway's own view: ocpp_inbound_call_seconds of MeterValues (arrival to answer inside the process) and the
 * event loop's longest delay, from GET /metrics (in cluster mode the primary gathers every worker's). Latencies
 * are bucket bounds, so p50 and p99 are "at most" figures; the loop delay is the largest since the last scrape.
 */
interface GatewayScrape {
  buckets: Map<number, number>;
  /** the same for every other action (StartTransaction, StatusNotification, Heartbeat, …) */
  byAction: Map<string, Map<number, number>>;
  loopDelayMaxMs: number | null;
  gcSeconds: number;
  /** pauses by GC kind: count, seconds, and how many took over 100 ms */
  gcByKind: Map<string, { count: number; seconds: number; over100ms: number }>;
}

async function scrapeGateway(wsUrl: string): Promise<GatewayScrape | null> {
  const base = wsUrl.replace(/^ws/, 'http').replace(/\/ocpp$/, '');
  const text = await fetch(`${base}/metrics`).then((r) => (r.ok ? r.text() : ''), () => '');
  if (!text) return null;
  const buckets = new Map<number, number>();
  const byAction = new Map<string, Map<number, number>>();
  for (const m of text.matchAll(/^ocpp_inbound_call_seconds_bucket\{le="([^"]+)",protocol="[^"]+",action="([^"]+)"\} (\d+)/gm)) {
    const le = m[1] === '+Inf' ? Infinity : Number(m[1]);
    const into = m[2] === 'MeterValues' || m[2] === 'TransactionEvent' ? buckets : (byAction.get(m[2]!) ?? byAction.set(m[2]!, new Map()).get(m[2]!)!);
    into.set(le, (into.get(le) ?? 0) + Number(m[3]));
  }
  const loop = /^nodejs_eventloop_lag_max_seconds (\S+)/m.exec(text)?.[1];
  const gc = [...text.matchAll(/^nodejs_gc_duration_seconds_sum\{[^}]*\} (\S+)/gm)].reduce((a, m) => a + Number(m[1]), 0);
  const gcByKind = new Map<string, { count: number; seconds: number; over100ms: number }>();
  const kind = (k: string) => gcByKind.get(k) ?? gcByKind.set(k, { count: 0, seconds: 0, over100ms: 0 }).get(k)!;
  for (const m of text.matchAll(/^nodejs_gc_duration_seconds_(sum|count)\{kind="([^"]+)"\} (\S+)/gm)) kind(m[2]!)[m[1] === 'sum' ? 'seconds' : 'count'] = Number(m[3]);
  const upTo100 = new Map<string, number>();
  for (const m of text.matchAll(/^nodejs_gc_duration_seconds_bucket\{le="0\.1",kind="([^"]+)"\} (\S+)/gm)) upTo100.set(m[1]!, Number(m[2]));
  for (const [k, g] of gcByKind) g.over100ms = g.count - (upTo100.get(k) ?? g.count);
  return { buckets, byAction, loopDelayMaxMs: loop === undefined ? null : Math.round(Number(loop) * 1000), gcSeconds: gc, gcByKind };
}

/** p50 and p99 (bucket bounds, ms) of the MeterValues answered between two scrapes (from the start without one) */
function ownLatency(after: GatewayScrape | null, before?: GatewayScrape | null, action?: string): { count: number; p50_ms: number | null; p99_ms: number | null } | null {
  const of = (g: GatewayScrape | null | undefined) => (action === undefined ? g?.buckets : g?.byAction.get(action));
  const buckets = of(after);
  if (!buckets || buckets.size === 0) return null;
  const b = new Map([...buckets].map(([le, n]) => [le, n - (of(before)?.get(le) ?? 0)]));
  const bounds = [...b.keys()].sort((x, y) => x - y);
  const count = b.get(Infinity) ?? 0;
  const at = (q: number) => {
    const le = bounds.find((x) => (b.get(x) ?? 0) >= q * count);
    return le === undefined || le === Infinity ? null : Math.round(le * 1000);
  };
  return { count, p50_ms: at(0.5), p99_ms: at(0.99) };
}

async function rssOf(server: ChildProcess): Promise<number> {
  const p = waitMessage<{ rss: number }>(server, 'rss', 30_000);
  server.send({ cmd: 'rss' });
  return (await p).rss;
}

/** --perf: `perf record` of the server process from now until it is sent SIGINT (null without --perf or with a clustered gateway) */
function startPerf(target: 'gateway' | 'bare', server: ChildProcess): ChildProcess | null {
  if (!a.perf || !server.pid || (target === 'gateway' && workers > 1)) return null;
  fs.mkdirSync(a.perf, { recursive: true });
  const file = path.join(path.resolve(a.perf), `${target}-${Date.now()}.perf.data`);
  say(`   perf: recording ${target} (pid ${server.pid}) over the steady window into ${file}`);
  const rec = spawn('perf', ['record', '-e', 'cpu-clock', '-F', '499', '-g', '-p', String(server.pid), '-o', file], { stdio: 'ignore' });
  rec.on('error', (err) => say(`   perf: not recorded (${err.message})`));
  return rec;
}

/** --profile: every server process (and with --profile-drivers every driver) writes a V8 CPU profile into the directory when it exits */
const profileArgs = a.profile ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(a.profile)}`] : [];
const driverProfileArgs = a['profile-drivers'] ? profileArgs : [];
const perfArgs = a.perf ? ['--perf-basic-prof'] : [];
// the gateway runs with the flags of `npm start` (start-flags.ts), then BENCH_GATEWAY_NODE_FLAGS
const gatewayFlags = [...startNodeFlags(), ...(process.env.BENCH_GATEWAY_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean)];

async function runTarget(target: 'gateway' | 'bare'): Promise<TargetResult> {
  const prefix = `BENCH-${target.toUpperCase()}-${Date.now().toString(36)}-`;
  say(`\n== ${target}: starting the server and registering ${count} chargers …`);
  const server = fork(path.join(here, 'server-child.ts'), [target, String(count), prefix, String(target === 'gateway' ? workers : 1)], {
    // BENCH_GATEWAY_NODE_FLAGS: node/V8 flags for the gateway alone (a clustered gateway passes them to its processes)
    execArgv: ['--import', 'tsx', '--expose-gc', ...profileArgs, ...perfArgs, ...(target === 'gateway' && workers === 1 ? gatewayFlags : [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    cwd: root,
    // a clustered gateway (bench/cluster-gateway.ts) passes the profile flags to its primary, whose workers inherit them
    env: {
      ...process.env,
      ...(a.statements ? { BENCH_STATEMENTS: '1' } : {}),
      ...(a.profile ? { BENCH_CPU_PROF_DIR: path.resolve(a.profile) } : {}),
      BENCH_HISTORY_MONTHS: String(historyMonths),
    },
  });
  let waits: DbWaitSampler | null = null;
  try {
    const ready = await waitMessage<{ url: string; csv: string; db: string; database?: string }>(server, 'ready', 10 * 60_000);
    if (a['db-waits'] && target === 'gateway' && ready.database && process.env.DATABASE_URL) waits = new DbWaitSampler(process.env.DATABASE_URL, ready.database);
    await waits?.start();
    const windowAt: { workloadStart?: number; workloadEnd?: number; steadyStart?: number; steadyEnd?: number } = {};
    const rssBefore = await rssOf(server);
    say(`   ${target} at ${ready.url} (database: ${ready.db}), RSS ${(rssBefore / 1048576).toFixed(0)} MB; driving it from a separate process …`);
    const slices = splitCsv(ready.csv, drivers);
    if (drivers > 1) say(`   driving ${count} chargers from ${drivers} processes (source addresses ${sourceAddress(0, drivers)}…${sourceAddress(drivers - 1, drivers)})`);
    const loads = slices.map((csv, d) => {
      const local = sourceAddress(d, drivers);
      return fork(
        path.join(root, 'simulator', 'cli.ts'),
        [
          '--url', ready.url,
          '--csv', csv,
          '--protocol', a.protocol!,
          '--scenario', 'load',
          '--duration', a.duration!,
          '--rate', String(share(Number(a.rate), drivers, d)),
          '--ramp', String(share(Number(a.ramp), drivers, d)),
          ...(a['skip-storm'] ? [] : ['--storm']),
          ...(a['spread-starts'] ? ['--spread-starts'] : []),
          ...(a['idle-readings'] ? ['--idle-readings'] : []),
          ...(a.quirks ? ['--quirks', a.quirks] : []),
          ...(Number(a['replay-share']) > 0 ? ['--replay-share', a['replay-share']!] : []),
          '--hold', '4',
          // every driver starts its workload when all are connected: one steady window for all, none measuring
          // another's ramp or start burst
          '--wait-go',
          ...(local ? ['--local-address', local] : []),
          '--json',
        ],
        { execArgv: ['--import', 'tsx', ...driverProfileArgs], stdio: ['ignore', 'ignore', 'inherit', 'ipc'], cwd: root },
      );
    });
    let rssConnected = rssBefore;
    let cpuStart: number | undefined;
    let cpuEnd: number | undefined;
    let mvInWorkload = 0;
    let msgsInWorkload = 0;
    let connected = 0;
    const seen = { connected: 0, start: 0, done: 0, steadyStart: 0, steadyEnd: 0 };
    let perf: ChildProcess | null = null;
    // the steady window: from the last driver's steady-start to the first driver's steady-end; its MeterValues
    // are each driver's own count between its two marks
    const steady: { cpuStart?: number; cpuEnd?: number; mvStart: number; mvEnd: number; open: boolean } = { mvStart: 0, mvEnd: 0, open: false };
    const counted = a.statements && target === 'gateway';
    const snaps: { workloadStart?: Counts; steadyStart?: Counts; steadyEnd?: Counts; stormStart?: Counts; stormEnd?: Counts } = {};
    const phases: Promise<void>[] = [];
    const own: { steadyStart?: GatewayScrape | null; steadyEnd?: GatewayScrape | null } = {};
    const progress = new Map<number, ProgressLine>();
    loads.forEach((load, d) =>
      load.on('message', (m: any) => {
        if (m?.type === 'progress') mark({ target, driver: d, ...m.progress });
        if (m?.type === 'phase') mark({ target, driver: d, mark: m.phase });
        if (m?.type === 'progress' && tty) {
          progress.set(d, m.progress as ProgressLine);
          const all = [...progress.values()];
          const line: ProgressLine = {
            ...all[0]!,
            connected: all.reduce((x, p) => x + p.connected, 0),
            booted: all.reduce((x, p) => x + p.booted, 0),
            target: count,
            messagesPerSecond: all.reduce((x, p) => x + p.messagesPerSecond, 0),
            errors: all.reduce((x, p) => x + p.errors, 0),
            p99: Math.max(...all.map((p) => p.p99 ?? 0)),
          };
          process.stderr.write('\r   ' + formatProgress(line) + '\x1b[K');
        }
        if (m?.type !== 'phase') return;
        // with several drivers: the workload window runs from the first driver's start to the last one's end
        if (m.phase === 'workload-start' && ++seen.start === 1) {
          windowAt.workloadStart = Date.now();
          phases.push(cpuOf(server).then((us) => void (cpuStart = us)));
          if (counted) phases.push(statementsOf(server).then((c) => void (snaps.workloadStart = c)));
        }
        if (m.phase === 'steady-start') {
          steady.mvStart += Number(m.data?.meter_values_acked ?? 0);
          if (++seen.steadyStart === drivers && seen.steadyEnd === 0) {
            steady.open = true;
            windowAt.steadyStart = Date.now();
            perf = startPerf(target, server);
            phases.push(cpuOf(server).then((us) => void (steady.cpuStart = us)));
            if (counted) phases.push(statementsOf(server).then((c) => void (snaps.steadyStart = c)));
            if (target === 'gateway') phases.push(scrapeGateway(ready.url).then((g) => void (own.steadyStart = g)));
          }
        }
        if (m.phase === 'steady-end') {
          steady.mvEnd += Number(m.data?.meter_values_acked ?? 0);
          if (++seen.steadyEnd === 1 && steady.open) {
            windowAt.steadyEnd = Date.now();
            perf?.kill('SIGINT');
            phases.push(cpuOf(server).then((us) => void (steady.cpuEnd = us)));
            if (target === 'gateway') phases.push(scrapeGateway(ready.url).then((g) => void (own.steadyEnd = g)));
            if (counted) phases.push(statementsOf(server).then((c) => void (snaps.steadyEnd = c)));
          }
        }
        if (m.phase === 'workload-done') {
          mvInWorkload += Number(m.data?.meter_values_acked ?? 0);
          msgsInWorkload += Number(m.data?.messages_acked ?? 0);
          if (++seen.done === drivers) {
            windowAt.workloadEnd = Date.now();
            phases.push(cpuOf(server).then((us) => void (cpuEnd = us)));
            if (counted) phases.push(statementsOf(server).then((c) => void (snaps.stormStart = c)));
          }
        }
        if (m.phase === 'storm-done' && counted) {
          phases.push(statementsOf(server).then((c) => void (snaps.stormEnd = c)));
        }
        if (m.phase === 'connected') {
          connected += Number(m.data?.connected ?? 0);
          if (++seen.connected === drivers)
            phases.push(
              rssOf(server)
                .then((r) => void (rssConnected = r))
                .finally(() => {
                  for (const l of loads) if (l.connected) l.send({ cmd: 'go' });
                }),
            );
        }
      }),
    );
    const parts = await Promise.all(
      loads.map((load) => waitMessage<{ summary: FleetSummary }>(load, 'summary', Number(a['timeout-s']) * 1000).then((m) => m.summary)),
    ).finally(() => {
      if (tty) process.stderr.write('\n');
    });
    const summary = mergeSummaries(parts);
    await Promise.all(phases);
    statementReport('in the whole workload window', snaps.workloadStart, snaps.stormStart, msgsInWorkload, 'message');
    statementReport('in the steady window', snaps.steadyStart, snaps.steadyEnd, steady.mvEnd - steady.mvStart, 'MeterValues');
    statementReport('in the storm', snaps.stormStart, snaps.stormEnd, summary.storm?.rebooted ?? 0, 'charger');
    const dl = summary.driver_loop_delay_steady_ms;
    if (dl) say(`   the driver's own event-loop delay in the steady window (the worst of ${drivers} process(es)): p99 ${dl.p99} ms, max ${dl.max} ms`);
    say(`   MeterValues acknowledged outside the steady window: ${formatOutside(summary.meter_values_latency_outside_sample)}`);
    await Promise.all(loads.map((load) => new Promise<void>((resolve) => (load.exitCode !== null ? resolve() : load.once('exit', () => resolve())))));
    await waits?.stop();
    const OVER_MS = 100;
    const dbWaits = waits
      ? {
          steady: summariseWaits(waits.samples, windowAt.steadyStart ?? Infinity, windowAt.steadyEnd ?? -Infinity, OVER_MS),
          workload: summariseWaits(waits.samples, windowAt.workloadStart ?? Infinity, windowAt.workloadEnd ?? -Infinity, OVER_MS),
          wal_steady: walBetween(waits.wal, windowAt.steadyStart ?? Infinity, windowAt.steadyEnd ?? -Infinity),
          wal_workload: walBetween(waits.wal, windowAt.workloadStart ?? Infinity, windowAt.workloadEnd ?? -Infinity),
          session_updates_steady: tableUpdatesBetween(waits.sessionUpdates, windowAt.steadyStart ?? Infinity, windowAt.steadyEnd ?? -Infinity),
          server_cpu_us_per_call_steady: perCall(serverCpuBetween(waits.serverCpu, windowAt.steadyStart ?? Infinity, windowAt.steadyEnd ?? -Infinity), steady.mvEnd - steady.mvStart),
          // the whole workload window holds the bursts of starts and stops, per message of any kind
          server_cpu_us_per_msg_workload: perCall(serverCpuBetween(waits.serverCpu, windowAt.workloadStart ?? Infinity, windowAt.workloadEnd ?? -Infinity), msgsInWorkload),
        }
      : null;
    if (dbWaits) {
      say(`   database waits (pg_stat_activity every 100 ms) in the steady window: ${formatWaits(dbWaits.steady, OVER_MS)}`);
      say(`     … in the whole workload window: ${formatWaits(dbWaits.workload, OVER_MS)}`);
      say(`   WAL written (the whole server's) in the steady window: ${formatWal(dbWaits.wal_steady, steady.mvEnd - steady.mvStart, 'MeterValues')}`);
      say(`     … in the whole workload window: ${formatWal(dbWaits.wal_workload, msgsInWorkload, 'message')}`);
      say(`   charging_sessions in the steady window (pg_stat_user_tables): ${formatTableUpdates(dbWaits.session_updates_steady, steady.mvEnd - steady.mvStart, 'MeterValues')}`);
      say(
        `   PostgreSQL's own CPU (its processes on this machine) in the steady window: ${dbWaits.server_cpu_us_per_call_steady === null ? 'not seen (no postgres process here)' : `${dbWaits.server_cpu_us_per_call_steady} µs per MeterValues`}`,
      );
      if (dbWaits.server_cpu_us_per_msg_workload !== null) say(`     … in the whole workload window: ${dbWaits.server_cpu_us_per_msg_workload} µs per message`);
    }
    const kept = target === 'gateway' ? await storedOf(server) : null;
    if (target === 'gateway') {
      const last = await scrapeGateway(ready.url);
      const whole = ownLatency(last);
      const ms = (v: number | null) => (v === null ? '>10000' : String(v));
      if (whole) say(`   the gateway's own view (ocpp_inbound_call_seconds over ${workers} worker(s), ${whole.count} MeterValues since start): p50 ≤ ${ms(whole.p50_ms)} ms, p99 ≤ ${ms(whole.p99_ms)} ms`);
      const others = [...(last?.byAction.keys() ?? [])].sort().flatMap((k) => {
        const l = ownLatency(last, null, k);
        return l && l.count > 0 ? [`${k} ${l.count}: p50 ≤ ${ms(l.p50_ms)} ms, p99 ≤ ${ms(l.p99_ms)} ms`] : [];
      });
      if (others.length) say(`     other calls since start: ${others.join('; ')}`);
      const inSteady = ownLatency(own.steadyEnd ?? null, own.steadyStart);
      if (inSteady && own.steadyEnd) {
        const gc = own.steadyStart ? (own.steadyEnd.gcSeconds - own.steadyStart.gcSeconds).toFixed(1) : '?';
        say(`   … in the steady window: ${inSteady.count} MeterValues, p50 ≤ ${ms(inSteady.p50_ms)} ms, p99 ≤ ${ms(inSteady.p99_ms)} ms; longest event-loop delay ${own.steadyEnd.loopDelayMaxMs ?? '?'} ms (the worst worker), garbage collection ${gc} s`);
        const kinds = [...own.steadyEnd.gcByKind].map(([k, g]) => {
          const b = own.steadyStart?.gcByKind.get(k) ?? { count: 0, seconds: 0, over100ms: 0 };
          return `${k} ${g.count - b.count} pauses ${(g.seconds - b.seconds).toFixed(1)} s (${g.over100ms - b.over100ms} over 100 ms)`;
        });
        if (kinds.length) say(`     garbage collection by kind: ${kinds.join('; ')}`);
      }
    }
    const acked = summary.periodic_acked?.count ?? 0;
    return {
      target,
      db: ready.db,
      cpu_us_per_call: cpuStart !== undefined && cpuEnd !== undefined && mvInWorkload > 0 ? Math.round((cpuEnd - cpuStart) / mvInWorkload) : null,
      cpu_us_per_call_steady:
        steady.cpuStart !== undefined && steady.cpuEnd !== undefined && seen.steadyEnd === drivers && steady.mvEnd > steady.mvStart
          ? Math.round((steady.cpuEnd - steady.cpuStart) / (steady.mvEnd - steady.mvStart))
          : null,
      cpu_us_per_message: cpuStart !== undefined && cpuEnd !== undefined && msgsInWorkload > 0 ? Math.round((cpuEnd - cpuStart) / msgsInWorkload) : null,
      readings: {
        acked,
        stored: kept?.count ?? null,
        lost: kept ? Math.max(0, acked - kept.count) : null,
        wh_match: kept ? kept.wh_sum === summary.periodic_acked?.wh_sum : null,
      },
      rss_before_mb: Math.round(rssBefore / 1048576),
      rss_connected_mb: Math.round(rssConnected / 1048576),
      rss_per_connection_kb: connected > 0 ? Math.round((rssConnected - rssBefore) / connected / 102.4) / 10 : null,
      db_waits: dbWaits,
      summary,
    };
  } finally {
    await waits?.stop();
    if (server.exitCode === null) {
      server.send({ cmd: 'stop' });
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          server.kill('SIGKILL');
          resolve();
        }, 30_000);
        server.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
}

function row(r: TargetResult) {
  const s = r.summary;
  return {
    target: r.target,
    connections_held: s.connected_peak,
    booted: s.booted,
    meter_values_per_s: s.meter_values_per_second,
    cpu_us_per_call: r.cpu_us_per_call,
    cpu_us_per_call_steady: r.cpu_us_per_call_steady,
    cpu_us_per_msg: r.cpu_us_per_message,
    mv_ack_p50_ms: s.meter_values_ack_latency_ms.p50,
    mv_ack_p99_ms: s.meter_values_ack_latency_ms.p99,
    mv_ack_p99_steady_ms: s.meter_values_ack_latency_steady_ms?.p99 ?? null,
    all_ack_p50_ms: s.messages.ack_latency_ms.p50,
    all_ack_p99_ms: s.messages.ack_latency_ms.p99,
    errors: s.messages.errors + s.connect_failures,
    rss_per_connection_kb: r.rss_per_connection_kb,
    rss_connected_mb: r.rss_connected_mb,
    storm_reconnect_boot_ms: s.storm?.reconnect_boot_ms ?? null,
    storm_rebooted: s.storm ? `${s.storm.rebooted}/${s.storm.dropped}` : null,
    readings_acked: r.readings.acked,
    readings_stored: r.readings.stored,
    readings_lost: r.readings.lost,
  };
}

async function main(): Promise<void> {
  const machine = {
    nproc: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    ram_gb: Math.round(os.totalmem() / 1073741824),
    node: process.version,
    platform: `${os.type()} ${os.release()}`,
  };
  const config = { count, workers, drivers, duration_s: Number(a.duration), rate: Number(a.rate) || 'closed loop', ramp_per_s: Number(a.ramp), protocol: a.protocol, ...(repeat > 1 ? { repeat } : {}), ...(historyMonths > 0 ? { history_months: historyMonths } : {}) };
  say(`OCPP benchmark: ${JSON.stringify(config)}\nmachine: ${JSON.stringify(machine)}`);
  const rounds: Array<{ rows: Array<ReturnType<typeof row>>; ratios: Record<string, number | null> | null; results: TargetResult[] }> = [];
  for (let k = 0; k < repeat; k++) {
    if (repeat > 1) say(`\n#### round ${k + 1} of ${repeat}`);
    const results: TargetResult[] = [];
    for (const t of roundOrder(targets, k)) results.push(await runTarget(t));
    results.sort((x, y) => targets.indexOf(x.target as 'gateway' | 'bare') - targets.indexOf(y.target as 'gateway' | 'bare'));
    const rows = results.map(row);
    const ratios = ratiosOf(rows);
    rounds.push({ rows, ratios, results });
    if (!a.json) printTable(rows, ratios, results);
  }
  const summary = repeat > 1 ? summariseRatios(rounds.map((r) => r.ratios)) : null;
  if (a.json) {
    const last = rounds[rounds.length - 1]!;
    const extra = repeat > 1 ? { rounds: rounds.map((r) => ({ results: r.rows, ratio_gateway_over_bare: r.ratios })), ratio_summary: summary } : {};
    process.stdout.write(JSON.stringify({ machine, config, results: last.rows, ratio_gateway_over_bare: last.ratios, summaries: last.results, ...extra }, null, 2) + '\n');
    return;
  }
  if (summary) {
    process.stdout.write(`\ngateway/bare over ${repeat} rounds (alternating which server goes first): median [min … max], then each round\n`);
    const fmt = (v: number | null) => (v === null ? '-' : String(v));
    for (const [m, x] of Object.entries(summary)) {
      if (x.median === null) continue;
      process.stdout.write(`  ${m.padEnd(24)} ${fmt(x.median).padStart(7)}  [${fmt(x.min)} … ${fmt(x.max)}]  rounds: ${x.rounds.map(fmt).join(', ')}\n`);
    }
  }
}

/** gateway/bare for each column of one round's rows (null when either server is missing). */
function ratiosOf(rows: Array<ReturnType<typeof row>>): Record<string, number | null> | null {
  const g = rows.find((r) => r.target === 'gateway');
  const b = rows.find((r) => r.target === 'bare');
  if (!g || !b) return null;
  const ratio = (x: number | null | undefined, y: number | null | undefined) => (x != null && y != null && y !== 0 ? Math.round((x / y) * 100) / 100 : null);
  return {
    meter_values_per_s: ratio(g.meter_values_per_s, b.meter_values_per_s),
    cpu_us_per_call: ratio(g.cpu_us_per_call, b.cpu_us_per_call),
    cpu_us_per_call_steady: ratio(g.cpu_us_per_call_steady, b.cpu_us_per_call_steady),
    cpu_us_per_msg: ratio(g.cpu_us_per_msg, b.cpu_us_per_msg),
    mv_ack_p50_ms: ratio(g.mv_ack_p50_ms, b.mv_ack_p50_ms),
    mv_ack_p99_ms: ratio(g.mv_ack_p99_ms, b.mv_ack_p99_ms),
    mv_ack_p99_steady_ms: ratio(g.mv_ack_p99_steady_ms, b.mv_ack_p99_steady_ms),
    all_ack_p50_ms: ratio(g.all_ack_p50_ms, b.all_ack_p50_ms),
    all_ack_p99_ms: ratio(g.all_ack_p99_ms, b.all_ack_p99_ms),
    rss_per_connection_kb: ratio(g.rss_per_connection_kb, b.rss_per_connection_kb),
    storm_reconnect_boot_ms: ratio(g.storm_reconnect_boot_ms, b.storm_reconnect_boot_ms),
  };
}

/** One round's table: a row per server and the gateway/bare ratios. */
function printTable(rows: Array<ReturnType<typeof row>>, ratios: Record<string, number | null> | null, results: TargetResult[]): void {
  const cols = Object.keys(rows[0] ?? {}) as Array<keyof ReturnType<typeof row>>;
  const table = [cols, ...rows.map((r) => cols.map((c) => String(r[c] ?? '-'))), ...(ratios ? [['gateway/bare', ...cols.slice(1).map((c) => String(ratios[c] ?? ''))]] : [])];
  const widths = cols.map((_, i) => Math.max(...table.map((r) => String(r[i]).length)));
  process.stdout.write('\n' + table.map((r) => r.map((v, i) => String(v).padEnd(widths[i]!)).join('  ')).join('\n') + '\n');
  for (const r of results) for (const e of r.summary.errors.slice(0, 5)) process.stdout.write(`${r.target} error: ${e}\n`);
}

const guard = setTimeout(() => {
  process.stderr.write('bench: overall time limit reached, stopping\n');
  process.exit(1);
}, (Number(a['timeout-s']) + 600) * 1000 * repeat);
guard.unref();

/** the timeline's last lines are written before the process exits */
const closeTimeline = () => new Promise<void>((resolve) => (timeline ? timeline.end(resolve) : resolve()));

runBench('bench', main, closeTimeline);
