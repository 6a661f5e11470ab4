// `npm run simulate -- [options]`: a thin argument parser over the simulator library (docs/simulator.md).
import fs from 'node:fs';
import { setMaxListeners } from 'node:events';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { PROTOCOLS, QUIRKS, type Protocol, type Quirk } from './charge-point.ts';
import { formatProgress, identitiesFor, runFleet, type FleetWorkload } from './load.ts';
import { apiUrlFromOcppUrl, registerChargers, type Credential } from './register.ts';
import { SCENARIOS, planFor, runScenario, type ScenarioName, type ScenarioParams } from './scenarios/index.ts';
import { describe as describePlan, parseMonth } from './scenarios/plan.ts';
import { defaultStateDir, stateFile } from './meter-state.ts';
import { HELP } from './cli-help.ts';


/** --wait-go: resolves when the parent process sends {cmd: 'go'} (or the run is aborted, or the parent went away) */
function goFromParent(signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      process.off('message', onMessage);
      process.off('disconnect', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const onMessage = (m: unknown) => {
      if ((m as { cmd?: unknown } | null)?.cmd === 'go') done();
    };
    process.on('message', onMessage);
    process.once('disconnect', done);
    signal.addEventListener('abort', done, { once: true });
    if (signal.aborted || !process.connected) done();
  });
}

function fail(msg: string): never {
  process.stderr.write(`simulate: ${msg}\n(see --help)\n`);
  process.exit(2);
}

function int(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) fail(`--${name} must be a non-negative integer, got ${v}`);
  return Number(v);
}

/** a whole number of at least 1 (a power or a duration: 0 would divide by zero or send energy in no time) */
function positive(name: string, v: string): number {
  if (!/^\d+$/.test(v) || Number(v) < 1) fail(`--${name} must be a whole number of at least 1, got ${v}`);
  return Number(v);
}

/** A share between 0 and 1 (a decimal number). */
function share01(name: string, v: string): number {
  const n = Number(v);
  if (!/^\d*\.?\d+$/.test(v) || n > 1) fail(`--${name} must be a number from 0 to 1, got ${v}`);
  return n;
}

function readCsv(file: string): Credential[] {
  const lines = fs.readFileSync(file, 'utf8').split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const rows = lines.map((l) => l.split(',').map((c) => c.trim().replace(/^"|"$/g, '')));
  if (rows[0] && /^identity$/i.test(rows[0][0] ?? '')) rows.shift();
  return rows.map(([identity, password]) => {
    if (!identity) fail(`${file}: empty identity`);
    return { identity, password: password || undefined };
  });
}

const OPTIONS = {
  url: { type: 'string' },
  identity: { type: 'string' },
  password: { type: 'string' },
  csv: { type: 'string' },
  protocol: { type: 'string', default: 'ocpp1.6' },
  vendor: { type: 'string' },
  model: { type: 'string' },
  serial: { type: 'string' },
  firmware: { type: 'string' },
  connectors: { type: 'string' },
  'timeout-ms': { type: 'string' },
  'no-stop-data': { type: 'boolean', default: false },
  insecure: { type: 'boolean', default: false },
  'local-address': { type: 'string' },
  'spread-starts': { type: 'boolean', default: false },
  'replay-share': { type: 'string' },
  'idle-readings': { type: 'boolean', default: false },
  'state-dir': { type: 'string' },
  'no-state': { type: 'boolean', default: false },
  scenario: { type: 'string' },
  energy: { type: 'string' },
  power: { type: 'string' },
  minutes: { type: 'string' },
  'meter-interval': { type: 'string' },
  month: { type: 'string' },
  sessions: { type: 'string' },
  seed: { type: 'string' },
  realtime: { type: 'boolean', default: false },
  quirks: { type: 'string' },
  'id-tag': { type: 'string' },
  stay: { type: 'boolean', default: false },
  count: { type: 'string' },
  prefix: { type: 'string' },
  register: { type: 'boolean', default: false },
  token: { type: 'string' },
  'admin-token': { type: 'string' },
  'api-url': { type: 'string' },
  'write-csv': { type: 'string' },
  ramp: { type: 'string' },
  rate: { type: 'string' },
  duration: { type: 'string' },
  storm: { type: 'boolean', default: false },
  hold: { type: 'string' },
  'wait-go': { type: 'boolean', default: false },
  'storm-jitter': { type: 'string' },
  json: { type: 'boolean', default: false },
  verbose: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

/** parseArgs' own refusals (an unknown option, an option without its value, a stray argument) are usage errors too */
function parse() {
  try {
    return parseArgs({ options: OPTIONS, strict: true, allowPositionals: false });
  } catch (err) {
    fail((err as Error).message);
  }
}

async function main(): Promise<void> {
  const { values: a } = parse();
  if (a.help) {
    process.stdout.write(HELP);
    return;
  }
  if (!a.url) fail('--url is required');
  if (!/^wss?:\/\//.test(a.url)) fail('--url must start with ws:// or wss://');
  if (a['wait-go'] && !process.send) fail('--wait-go needs a parent process that sends {"cmd":"go"} over IPC');
  const protocol = a.protocol as Protocol;
  if (!PROTOCOLS.includes(protocol)) fail(`--protocol must be one of ${PROTOCOLS.join(', ')}`);
  const quirks = a.quirks ? (a.quirks.split(',').map((q) => q.trim()).filter(Boolean) as Quirk[]) : undefined;
  for (const q of quirks ?? []) if (!QUIRKS.includes(q)) fail(`unknown quirk ${q} (${QUIRKS.join(', ')})`);
  if (quirks?.includes('no-subprotocol') && protocol !== 'ocpp1.6') fail('--quirks no-subprotocol is for ocpp1.6 only (a 2.0.1 upgrade without a subprotocol is served as 1.6)');
  if (a.month !== undefined && !parseMonth(a.month)) fail(`--month must be YYYY-MM with a month 01-12, got ${a.month}`);
  // 1.6 idTag is CiString20, 2.0.1 idToken CiString36
  const idTagMax = protocol === 'ocpp1.6' ? 20 : 36;
  const idTag = a['id-tag'];
  if (idTag !== undefined && (idTag.length > idTagMax || !/^[\x21-\x7e]+$/.test(idTag))) fail(`--id-tag must be 1-${idTagMax} printable characters without spaces (${protocol}), got ${idTag}`);

  const log = a.verbose ? (l: string) => process.stderr.write(l + '\n') : () => {};
  const frames = a.verbose ? log : undefined;
  if (a['no-state'] && a['state-dir']) fail('--state-dir and --no-state exclude each other');
  let credentials: Credential[];
  const fleetMode = a.csv !== undefined || a.count !== undefined;
  if (a.csv) credentials = readCsv(a.csv);
  else if (a.count !== undefined) {
    const prefix = a.prefix ?? `SIM-${Math.random().toString(16).slice(2, 8).toUpperCase()}-`;
    credentials = identitiesFor(prefix, int('count', a.count)!).map((identity) => ({ identity, password: a.password }));
  } else credentials = [{ identity: a.identity ?? 'SIM-0001', password: a.password }];
  if (credentials.length === 0) fail('no charge points');

  const scenario = a.scenario ?? (credentials.length > 1 ? 'load' : 'boot');
  const fleetOnly = scenario === 'load' || scenario === 'idle';
  if (!fleetOnly && !(SCENARIOS as readonly string[]).includes(scenario)) fail(`unknown scenario ${scenario}`);
  const params: ScenarioParams = {
    ...(a.energy !== undefined ? { energyWh: int('energy', a.energy)! } : {}),
    ...(a.power !== undefined ? { powerW: positive('power', a.power) } : {}),
    ...(a.minutes !== undefined ? { durationS: positive('minutes', a.minutes) * 60 } : {}),
    ...(a['meter-interval'] !== undefined ? { meterIntervalS: Math.max(1, int('meter-interval', a['meter-interval'])!) } : {}),
    ...(a.month !== undefined ? { month: a.month } : {}),
    ...(a.sessions !== undefined ? { sessions: int('sessions', a.sessions)! } : {}),
    ...(a.seed !== undefined ? { seed: int('seed', a.seed)! } : {}),
    ...(a.realtime ? { realtime: true } : {}),
    ...(idTag !== undefined ? { idTag } : {}),
  };
  // the fleet's numbers, checked before anything connects (or registers)
  const fleetNumbers = {
    rampPerSecond: int('ramp', a.ramp) ?? 50,
    ratePerSecond: int('rate', a.rate) ?? 0,
    durationS: int('duration', a.duration) ?? 10,
    ...(a.hold !== undefined ? { holdS: int('hold', a.hold)! } : {}),
    stormJitterMs: int('storm-jitter', a['storm-jitter']) ?? 0,
    ...(a['replay-share'] !== undefined ? { replayShare: share01('replay-share', a['replay-share']) } : {}),
  };
  const callTimeoutMs = int('timeout-ms', a['timeout-ms']) ?? 30_000;
  const connectors = a.connectors !== undefined ? Math.max(1, int('connectors', a.connectors)!) : undefined;

  if (a.register) {
    const apiUrl = a['api-url'] ?? apiUrlFromOcppUrl(a.url);
    const reg = await registerChargers({ apiUrl, identities: credentials.map((c) => c.identity), token: a.token, adminToken: a['admin-token'], log });
    credentials = reg.credentials;
    if (a['write-csv']) fs.writeFileSync(a['write-csv'], 'identity,password\n' + credentials.map((c) => `${c.identity},${c.password ?? ''}`).join('\n') + '\n');
    if (!a.json) process.stderr.write(`registered ${credentials.length} charger(s) on ${apiUrl}\n`);
  }

  const common = {
    ...(a.vendor ? { vendor: a.vendor } : {}),
    ...(a.model ? { model: a.model } : {}),
    ...(a.firmware ? { firmware: a.firmware } : {}),
    ...(connectors !== undefined ? { connectors } : {}),
    ...(quirks ? { quirks } : {}),
    callTimeoutMs,
    ...(a['local-address'] ? { localAddress: a['local-address'] } : {}),
    ...(a['no-stop-data'] ? { stopTransactionData: false } : {}),
    ...(a.insecure ? { insecure: true } : {}),
    ...(frames ? { frames } : {}),
    // live sessions (remote starts, --realtime) charge at --power and report every --meter-interval
    ...(params.powerW !== undefined ? { livePowerW: params.powerW } : {}),
    ...(params.meterIntervalS !== undefined ? { liveMeterIntervalMs: params.meterIntervalS * 1000 } : {}),
  };

  const abort = new AbortController();
  // every charger of a fleet waits on this one signal (one listener per pending wait)
  setMaxListeners(0, abort.signal);
  process.once('SIGINT', () => abort.abort());
  process.once('SIGTERM', () => abort.abort());
  // IPC to a parent (the benchmark); a parent that went away is not an error here
  const send = (msg: unknown) => {
    if (process.send && process.connected) {
      sending++;
      process.send(msg, undefined, undefined, () => {
        if (--sending === 0) for (const f of flushed.splice(0)) f();
      });
    }
  };

  if (credentials.length === 1 && !fleetOnly) {
    const c = credentials[0]!;
    const { result, cp } = await runScenario(
      scenario as ScenarioName,
      {
        url: a.url,
        identity: c.identity,
        password: c.password,
        protocol,
        log,
        ...(a.serial ? { serial: a.serial } : {}),
        ...common,
        // the default meter is a single charger's: --count and --csv are fleet mode (no meter unless --state-dir),
        // even when they name one charger
        ...(a['no-state'] ? {} : a['state-dir'] ? { stateDir: a['state-dir'] } : fleetMode ? {} : { stateDir: defaultStateDir() }),
      },
      params,
    );
    if (a.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    else {
      process.stdout.write(`${scenario} on ${c.identity} (${protocol}${result.quirks.length ? `, quirks ${result.quirks.join(',')}` : ''})\n`);
      for (const s of result.sessions)
        process.stdout.write(`  session ${s.transactionId ?? '?'}  ${s.startedAt} → ${s.stoppedAt}  ${s.meterStartWh} → ${s.meterStopWh} Wh  ${s.energyWh} Wh${s.offline ? '  (offline, replayed)' : ''}${s.stopReason === 'DeAuthorized' ? '  (id tag not accepted: stopped at once)' : ''}\n`);
      if (result.reconnectMs !== undefined) process.stdout.write(`  reconnect + boot: ${result.reconnectMs} ms\n`);
      process.stdout.write(`  messages ${result.messages.sent}, acknowledged ${result.messages.acked}, errors ${result.messages.errors}\n`);
      for (const e of result.errors) process.stdout.write(`  error: ${e}\n`);
      if (cp.stateDir) process.stdout.write(`  meter kept in ${stateFile(cp.stateDir, c.identity)}${cp.restored ? ' (continued)' : ' (new)'}\n`);
      // simulated time: a run soon after another can place its sessions before the meter's last reading
      const lastAt = (c: number) => Date.parse(cp.restored?.lastReadingAt[String(c)] ?? '') || 0;
      const overlap = result.sessions.find((s) => Date.parse(s.startedAt) < lastAt(s.connectorId));
      if (overlap) process.stderr.write(`simulate: the session from ${overlap.startedAt} starts before this meter's last reading of the previous run (${cp.restored!.lastReadingAt[String(overlap.connectorId)]}); the central system sees overlapping sessions (wait longer between runs, or --no-state)\n`);
      process.stdout.write(`energy delivered: ${result.energyWh} Wh\n`);
    }
    send({ type: 'result', result });
    if (a.stay && !abort.signal.aborted) {
      process.stderr.write(`connected as ${c.identity}; answering the central system until Ctrl-C\n`);
      await new Promise<void>((resolve) => abort.signal.addEventListener('abort', () => resolve()));
    }
    await cp.close();
    // a failed call fails the run; so does an id tag on which no session could charge (each rejection is in errors)
    process.exitCode = result.messages.errors > 0 || (result.rejected.length > 0 && result.charged === 0) ? 1 : 0;
    return;
  }

  if (!fleetOnly && !a.json) {
    const plan = planFor(scenario as ScenarioName, params);
    if (plan.length > 0 && a.verbose) for (const p of plan) log(`  plan: ${describePlan(p)}`);
  }
  const tty = process.stderr.isTTY && !a.json;
  const summary = await runFleet({
    url: a.url,
    protocol,
    credentials,
    ...common,
    workload: scenario as FleetWorkload,
    ...fleetNumbers,
    ...(params.meterIntervalS !== undefined ? { meterIntervalS: params.meterIntervalS } : {}),
    ...(params.powerW !== undefined ? { powerW: params.powerW } : {}),
    storm: a.storm,
    ...(a['spread-starts'] ? { spreadStarts: true } : {}),
    ...(a['idle-readings'] ? { idleReadings: true } : {}),
    ...(a['state-dir'] ? { stateDir: a['state-dir'] } : {}),
    ...(a['wait-go'] ? { beforeWorkload: () => goFromParent(abort.signal) } : {}),
    scenarioParams: params,
    signal: abort.signal,
    log,
    onProgress: (p) => {
      if (tty) process.stderr.write('\r' + formatProgress(p) + '\x1b[K');
      send({ type: 'progress', progress: p });
    },
    onPhase: (phase, data) => send({ type: 'phase', phase, data }),
  });
  if (tty) process.stderr.write('\n');
  send({ type: 'summary', summary });
  if (a.json) process.stdout.write(JSON.stringify(summary, null, 2) + '\n');
  else {
    const m = summary.messages;
    process.stdout.write(
      [
        `fleet ${summary.workload}: ${summary.booted}/${summary.count} charge points booted (peak connected ${summary.connected_peak}), ramp ${summary.ramp_s} s`,
        `  messages ${m.sent}, acknowledged ${m.acked}, errors ${m.errors}; ack latency p50 ${m.ack_latency_ms.p50} ms, p99 ${m.ack_latency_ms.p99} ms`,
        `  MeterValues acknowledged: ${summary.meter_values_acked_in_workload} in ${summary.workload_s} s (${summary.meter_values_per_second}/s), ack p50 ${summary.meter_values_ack_latency_ms.p50} ms, p99 ${summary.meter_values_ack_latency_ms.p99} ms`,
        ...(summary.storm
          ? [`  storm: ${summary.storm.rebooted}/${summary.storm.dropped} reconnected and booted in ${summary.storm.reconnect_boot_ms} ms (p50 ${summary.storm.p50_ms} ms, p99 ${summary.storm.p99_ms} ms)`]
          : []),
        ...(summary.sessions ? [`  sessions charged ${summary.sessions.charged}, not authorised (id tag rejected) ${summary.sessions.rejected}`] : []),
        ...summary.errors.map((e) => `  error: ${e}`),
        `energy delivered: ${summary.energy_wh} Wh`,
        '',
      ].join('\n'),
    );
  }
  const noneCharged = summary.sessions !== undefined && summary.sessions.rejected > 0 && summary.sessions.charged === 0;
  process.exitCode = summary.connect_failures > 0 || summary.messages.errors > 0 || noneCharged ? 1 : 0;
}

/** IPC messages handed to process.send and not written yet (a fleet's summary is megabytes of latency samples) */
let sending = 0;
const flushed: Array<() => void> = [];
const allSent = () => new Promise<void>((resolve) => (sending === 0 ? resolve() : flushed.push(resolve)));

main().then(
  async () => {
    // the parent gets the summary before this process goes away
    await allSent();
    // ocpp-rpc keeps no timers once every client is closed; exit promptly anyway
    setTimeout(() => process.exit(process.exitCode ?? 0), 100).unref();
  },
  (err) => {
    const e = err as Error & { code?: unknown };
    const verbose = process.argv.includes('--verbose');
    process.stderr.write(`simulate: ${verbose ? (e.stack ?? e) : e.message}${e.code !== undefined ? ` (${String(e.code)})` : ''}\n`);
    process.exit(1);
  },
);
