// The command line of `npm run simulate` read into what a run needs: every check that turns a value the simulator
// cannot use into a usage error (UsageError: cli.ts prints it with "(see --help)" and exits 2) runs here, before
// anything connects or registers. A function of the arguments (and the files they name), so its checks are tested
// without a process per case.
import { PROTOCOLS, QUIRKS, type Protocol, type Quirk } from './charge-point.ts';
import { identitiesFor } from './load.ts';
import type { Credential } from './register.ts';
import { SCENARIOS, type ScenarioParams } from './scenarios/index.ts';
import { parseMonth } from './scenarios/plan.ts';
import { fail, int, positive, MAX_COUNT, share01, readCsv, givenPassword, parse } from './cli-args.ts';

/**
 * `args` without node and the script (process.argv.slice(2)); `canWaitGo`: the process has a parent to send it
 * {"cmd":"go"} (process.send is set). Throws UsageError for any value it cannot use.
 */
export function readOptions(args: string[], canWaitGo: boolean) {
  const { values: a } = parse(args);
  if (a.help) return { help: true } as const;
  if (!a.url) fail('--url is required');
  const url = a.url;
  if (!/^wss?:\/\//.test(a.url)) fail('--url must start with ws:// or wss://');
  // the identity is appended to the path: ws:// alone would make it the host name
  let host = '';
  try {
    host = new URL(a.url).hostname;
  } catch {
    /* below */
  }
  if (!host || a.url.replace(/^wss?:\/\//, '').startsWith('/')) fail(`--url must name a host, e.g. ws://localhost:8080/ocpp, got ${a.url}`);
  if (a['wait-go'] && !canWaitGo) fail('--wait-go needs a parent process that sends {"cmd":"go"} over IPC');
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
  const given = givenPassword(a);
  let passwordSource = given.source;
  if (a.csv !== undefined) {
    credentials = readCsv(a.csv);
    passwordSource = `--csv ${a.csv}`;
  } else if (a.count !== undefined) {
    const prefix = a.prefix ?? `SIM-${Math.random().toString(16).slice(2, 8).toUpperCase()}-`;
    credentials = identitiesFor(prefix, positive('count', a.count, MAX_COUNT)).map((identity) => ({ identity, password: given.password }));
  } else credentials = [{ identity: a.identity ?? 'SIM-0001', password: given.password }];
  if (credentials.length === 0) fail('no charge points');

  const scenario = a.scenario ?? (credentials.length > 1 ? 'load' : 'boot');
  const fleetOnly = scenario === 'load' || scenario === 'idle';
  if (!fleetOnly && !(SCENARIOS as readonly string[]).includes(scenario)) fail(`unknown scenario ${scenario}`);
  const params: ScenarioParams = {
    ...(a.energy !== undefined ? { energyWh: int('energy', a.energy)! } : {}),
    ...(a.power !== undefined ? { powerW: positive('power', a.power) } : {}),
    ...(a.minutes !== undefined ? { durationS: positive('minutes', a.minutes) * 60 } : {}),
    ...(a['meter-interval'] !== undefined ? { meterIntervalS: positive('meter-interval', a['meter-interval']) } : {}),
    ...(a.month !== undefined ? { month: a.month } : {}),
    ...(a.sessions !== undefined ? { sessions: int('sessions', a.sessions)! } : {}),
    ...(a.seed !== undefined ? { seed: int('seed', a.seed)! } : {}),
    ...(a.realtime ? { realtime: true } : {}),
    ...(idTag !== undefined ? { idTag } : {}),
  };
  // a live session lasts --minutes at the power that delivers --energy in them: a --power beside both cannot hold too
  if (a.realtime && a.energy !== undefined && a.power !== undefined && a.minutes !== undefined) {
    fail('--realtime takes two of --energy, --power and --minutes (with --minutes and --energy the power is energy / minutes)');
  }
  // the fleet's numbers, checked before anything connects (or registers)
  const fleetNumbers = {
    rampPerSecond: a.ramp !== undefined ? positive('ramp', a.ramp) : 50,
    ratePerSecond: int('rate', a.rate) ?? 0,
    durationS: int('duration', a.duration) ?? 10,
    ...(a.hold !== undefined ? { holdS: int('hold', a.hold)! } : {}),
    stormJitterMs: int('storm-jitter', a['storm-jitter']) ?? 0,
    ...(a['replay-share'] !== undefined ? { replayShare: share01('replay-share', a['replay-share']) } : {}),
  };
  const callTimeoutMs = a['timeout-ms'] !== undefined ? positive('timeout-ms', a['timeout-ms']) : 30_000;
  const connectors = a.connectors !== undefined ? positive('connectors', a.connectors) : undefined;

  return { help: false, a, url, protocol, quirks, idTag, log, frames, credentials, fleetMode, passwordSource, scenario, fleetOnly, params, fleetNumbers, callTimeoutMs, connectors } as const;
}
