// `npm run simulate -- [options]`: runs what the command line asks of the simulator library (docs/simulator.md);
// cli-options.ts reads and checks the arguments.
import fs from 'node:fs';
import { setMaxListeners } from 'node:events';
import type { SessionRecord } from './charge-point.ts';
import { formatProgress, runFleet, type FleetWorkload } from './load.ts';
import { apiUrlFromOcppUrl, registerChargers } from './register.ts';
import { planFor, runScenario, type ScenarioName } from './scenarios/index.ts';
import { describe as describePlan } from './scenarios/plan.ts';
import { defaultStateDir, loadMeterState, savedPasswordFor, stateFile } from './meter-state.ts';
import { HELP } from './cli-help.ts';
import { csvField, UsageError } from './cli-args.ts';
import { readOptions } from './cli-options.ts';

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

async function main(): Promise<void> {
  const o = readOptions(process.argv.slice(2), Boolean(process.send));
  if (o.help) {
    process.stdout.write(HELP);
    return;
  }
  const { a, url, protocol, quirks, idTag, log, frames, fleetMode, passwordSource, scenario, fleetOnly, params, fleetNumbers, callTimeoutMs, connectors } = o;
  let { credentials } = o;

  if (a.register) {
    const apiUrl = a['api-url'] ?? apiUrlFromOcppUrl(url);
    const reg = await registerChargers({ apiUrl, identities: credentials.map((c) => c.identity), token: a.token, adminToken: a['admin-token'], log });
    credentials = reg.credentials;
    if (a['write-csv']) fs.writeFileSync(a['write-csv'], 'identity,password\n' + credentials.map((c) => `${csvField(c.identity)},${csvField(c.password ?? '')}`).join('\n') + '\n');
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
  // the first SIGINT/SIGTERM stops the run: a scenario's running transaction is stopped as a charger's own stop
  // (reason Local), a boot retry's wait ends, --stay ends, the meter is saved and the summary printed (exit 130 for
  // SIGINT, 143 for SIGTERM when the signal cut a scenario short). A second signal exits at once.
  let signalled: NodeJS.Signals | undefined;
  const signalExit = (sig: NodeJS.Signals) => (sig === 'SIGTERM' ? 143 : 130);
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) {
      process.stderr.write(`simulate: ${sig} again: exiting at once (a transaction still running stays open on the central system)\n`);
      process.exit(signalExit(sig));
    }
    signalled = sig;
    process.stderr.write(`simulate: ${sig}: stopping (a running transaction is stopped, reason Local); ${sig} again exits at once\n`);
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
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
    // the default meter is a single charger's: --count and --csv are fleet mode (no meter unless --state-dir),
    // even when they name one charger
    const stateDir = a['no-state'] ? undefined : a['state-dir'] ? a['state-dir'] : fleetMode ? undefined : defaultStateDir();
    // a password the central system set in an earlier run replaces the given one (as on the charger): say so
    const saved = stateDir ? savedPasswordFor(loadMeterState(stateDir, c.identity), c.password) : undefined;
    if (saved) {
      process.stderr.write(
        `simulate: ${c.identity}: using the password the central system set on ${saved.at} (kept in ${stateFile(stateDir!, c.identity)}) instead of ${c.password === undefined ? 'none' : `the one from ${passwordSource}`}\n`,
      );
    }
    const { result, cp } = await runScenario(
      scenario as ScenarioName,
      {
        url,
        identity: c.identity,
        password: c.password,
        protocol,
        log,
        ...(a.serial ? { serial: a.serial } : {}),
        ...common,
        ...(stateDir ? { stateDir } : {}),
      },
      { ...params, signal: abort.signal },
    );
    const scenarioSessions = cp.sessions.length;
    if (!a.json) {
      process.stdout.write(`${scenario} on ${c.identity} (${protocol}${result.quirks.length ? `, quirks ${result.quirks.join(',')}` : ''})\n`);
      for (const s of result.sessions) process.stdout.write(sessionLine(s));
      if (result.reconnectMs !== undefined) process.stdout.write(`  reconnect + boot: ${result.reconnectMs} ms\n`);
      process.stdout.write(`  messages ${result.messages.sent}, acknowledged ${result.messages.acked}, errors ${result.messages.errors}\n`);
      for (const e of result.errors) process.stdout.write(`  error: ${e}\n`);
      if (result.interrupted) process.stdout.write(`  interrupted by ${signalled ?? 'a signal'}: stopped before the scenario's end\n`);
      // simulated time: a run soon after another can place its sessions before the meter's last reading
      const lastAt = (c: number) => Date.parse(cp.restored?.lastReadingAt[String(c)] ?? '') || 0;
      const overlap = result.sessions.find((s) => Date.parse(s.startedAt) < lastAt(s.connectorId));
      if (overlap) process.stderr.write(`simulate: the session from ${overlap.startedAt} starts before this meter's last reading of the previous run (${cp.restored!.lastReadingAt[String(overlap.connectorId)]}); the central system sees overlapping sessions (wait longer between runs, or --no-state)\n`);
      process.stdout.write(`energy delivered: ${result.energyWh} Wh\n`);
    }
    send({ type: 'result', result });
    let stay: { sessions: typeof result.sessions; energyWh: number } | undefined;
    if (a.stay && !result.interrupted) {
      if (!abort.signal.aborted) {
        process.stderr.write(`connected as ${c.identity}; answering the central system until Ctrl-C\n`);
        await new Promise<void>((resolve) => abort.signal.addEventListener('abort', () => resolve(), { once: true }));
      }
      // a session the central system started while we stayed is stopped as the charger's own stop (reason Local)
      cp.interrupt();
      await cp.stopCharging('Local');
      const sessions = cp.sessions.slice(scenarioSessions);
      stay = { sessions, energyWh: sessions.reduce((s, r) => s + r.energyWh, 0) };
      if (!a.json) {
        for (const s of sessions) process.stdout.write(sessionLine(s));
        process.stdout.write(`energy delivered while staying: ${stay.energyWh} Wh\n`);
      }
    }
    // close saves the meter: only then is it said to be kept (or that it was not)
    await cp.stopCharging('Local');
    await cp.close();
    if (a.json) process.stdout.write(JSON.stringify({ ...result, ...(stay ? { stay } : {}) }, null, 2) + '\n');
    else if (cp.stateDir && !cp.saveError) process.stdout.write(`  meter kept in ${stateFile(cp.stateDir, c.identity)}${cp.restored ? ' (continued)' : ' (new)'}\n`);
    if (cp.saveError) process.stderr.write(`simulate: ${cp.saveError}\n`);
    // a failed call fails the run; so does an id tag on which no session could charge (each rejection is in errors),
    // and a meter that could not be saved; else a scenario cut short by a signal exits 130 (SIGINT) / 143 (SIGTERM)
    const failed = result.messages.errors > 0 || (result.rejected.length > 0 && result.charged === 0) || cp.saveError !== undefined;
    process.exitCode = failed ? 1 : result.interrupted && signalled ? signalExit(signalled) : 0;
    return;
  }

  if (!fleetOnly && !a.json) {
    const plan = planFor(scenario as ScenarioName, params);
    if (plan.length > 0 && a.verbose) for (const p of plan) log(`  plan: ${describePlan(p)}`);
  }
  const tty = process.stderr.isTTY && !a.json;
  const summary = await runFleet({
    url,
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
  process.exitCode = summary.connect_failures > 0 || summary.messages.errors > 0 || noneCharged ? 1 : signalled ? signalExit(signalled) : 0;
}

function sessionLine(s: SessionRecord): string {
  return `  session ${s.transactionId ?? '?'}  ${s.startedAt} → ${s.stoppedAt}  ${s.meterStartWh} → ${s.meterStopWh} Wh  ${s.energyWh} Wh${s.offline ? '  (offline, replayed)' : ''}${s.stopReason === 'DeAuthorized' ? '  (id tag not accepted: stopped at once)' : ''}\n`;
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
    if (err instanceof UsageError) {
      process.stderr.write(`simulate: ${err.message}\n(see --help)\n`);
      process.exit(2);
    }
    const e = err as Error & { code?: unknown };
    const verbose = process.argv.includes('--verbose');
    process.stderr.write(`simulate: ${verbose ? (e.stack ?? e) : e.message}${e.code !== undefined ? ` (${String(e.code)})` : ''}\n`);
    process.exit(1);
  },
);
