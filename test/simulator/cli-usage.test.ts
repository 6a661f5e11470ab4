// The CLI's usage errors and the options an outside audit found ignored or misleading: an impossible --month, a 0
// --power or --minutes, 2.0.1 with the 1.6-only no-subprotocol quirk, an unknown or valueless option — all exit 2
// with "(see --help)" before connecting; --help names the quirks scenario's whole default set; --local-address is
// used by a single charger too; --count 1 / a one-line --csv is fleet mode and keeps no meter unless --state-dir;
// --verbose writes the connection events.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBareServer, type BareServer } from '../../simulator/bare-server.ts';
import { createRpcServer, type SimRpcServer } from '../../simulator/rpc.ts';
import { identitiesFor } from '../../simulator/load.ts';
import { defaultQuirks } from '../../simulator/scenarios/index.ts';
import { readOptions } from '../../simulator/cli-options.ts';
import { UsageError } from '../../simulator/cli-args.ts';

const cli = path.resolve(import.meta.dirname, '../../simulator/cli.ts');
// the default state directory of these runs: never $HOME
const defaultState = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-sim-usage-state-'));
const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-sim-usage-home-'));
let server: BareServer;

beforeAll(async () => {
  server = await startBareServer({ record: true });
});
afterAll(async () => {
  await server.close();
  fs.rmSync(defaultState, { recursive: true, force: true });
  fs.rmSync(home, { recursive: true, force: true });
});

function simulate(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', cli, ...args],
      { cwd: path.resolve(import.meta.dirname, '../..'), env: { ...process.env, HOME: home, ERE_SIMULATOR_STATE_DIR: defaultState, ...env } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
const sent = (identity: string) => server.received.filter((r) => r.identity === identity);

describe('usage errors: exit 2, "(see --help)", nothing connected', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['month 13', ['--scenario', 'month', '--month', '2026-13'], /--month must be YYYY-MM with a month 01-12, got 2026-13/],
    ['month 00', ['--scenario', 'month', '--month', '2026-00'], /--month .* got 2026-00/],
    ['a one-digit month', ['--scenario', 'month', '--month', '2026-1'], /--month .* got 2026-1/],
    ['power 0', ['--scenario', 'session', '--power', '0'], /--power must be a whole number of at least 1, got 0/],
    ['minutes 0', ['--scenario', 'session', '--minutes', '0', '--energy', '5000'], /--minutes must be a whole number of at least 1, got 0/],
    ['no-subprotocol on 2.0.1', ['--protocol', 'ocpp2.0.1', '--scenario', 'quirks', '--quirks', 'no-subprotocol'], /no-subprotocol is for ocpp1\.6 only/],
    ['an unknown option', ['--scenario', 'boot', '--bogus'], /Unknown option '--bogus'/],
    ['an option without its value', ['--scenario', 'boot', '--seed'], /--seed/],
    // found by an outside audit of the simulator (D199): impossible values that were taken, or failed later
    ['meter-interval 0', ['--scenario', 'session', '--meter-interval', '0'], /--meter-interval must be a whole number of at least 1, got 0/],
    ['connectors 0', ['--scenario', 'boot', '--connectors', '0'], /--connectors must be a whole number of at least 1, got 0/],
    ['ramp 0', ['--scenario', 'boot', '--ramp', '0'], /--ramp must be a whole number of at least 1, got 0/],
    ['timeout-ms 0', ['--scenario', 'boot', '--timeout-ms', '0'], /--timeout-ms must be a whole number of at least 1, got 0/],
    ['a count no process runs', ['--count', '99999999999999999999', '--prefix', 'USAGE-HUGE-'], /--count must be a whole number from 1 to 1000000, got 99999999999999999999/],
    ['a seed beyond a safe integer', ['--scenario', 'month', '--seed', '9007199254740993'], /--seed must be a non-negative integer/],
    ['a url without a host', ['--scenario', 'boot', '--url', 'ws://'], /--url must name a host/],
    ['a csv that does not exist', ['--csv', '/nonexistent/ere-sim.csv'], /--csv \/nonexistent\/ere-sim\.csv: no such file/],
    ['a password file that does not exist', ['--scenario', 'boot', '--password-file', '/nonexistent/pw'], /--password-file \/nonexistent\/pw: no such file/],
    ['--realtime with energy, power and minutes', ['--scenario', 'session', '--realtime', '--energy', '1000', '--power', '7400', '--minutes', '5'], /--realtime takes two of --energy, --power and --minutes/],
  ];
  // every check runs in readOptions before anything connects: each case in this process (a process per case took
  // ~1.5 s of CPU each), and two as the command a tester types, for the exit code, the line and no connection
  it.each(cases)('%s', (_name, args, message) => {
    let thrown: unknown;
    try {
      readOptions(['--url', server.url, '--identity', 'USAGE-IN-PROCESS', ...args], false);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    expect((thrown as Error).message).toMatch(message);
  });
  it.each([cases[0]!, cases[6]!])('as a command: %s exits 2 with "(see --help)" and connects nothing', async (_name, args, message) => {
    const identity = `USAGE-${Math.random().toString(16).slice(2, 8)}`;
    const r = await simulate(['--url', server.url, '--identity', identity, ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/^simulate: .*\n\(see --help\)\n$/);
    expect(sent(identity)).toEqual([]);
  });
});

describe('options', () => {
  it('--help states the quirks scenario default set, generated from the same list (other-locations included)', async () => {
    const r = await simulate(['--help']);
    expect(r.code).toBe(0);
    const listed = /quirks scenario default: ([a-z,-]+)/.exec(r.stdout)?.[1]?.split(',');
    expect(listed).toEqual(defaultQuirks('ocpp1.6'));
    expect(listed).toContain('other-locations');
    expect(r.stdout).toMatch(/--id-tag TAG/);
  });

  it('--local-address is the source address of a single charger too', async () => {
    const rpc: SimRpcServer = createRpcServer({ protocols: ['ocpp1.6'], strictMode: false });
    const seen: string[] = [];
    rpc.auth((accept, _reject, hs) => {
      seen.push(String(hs.remoteAddress));
      accept({}, 'ocpp1.6');
    });
    rpc.on('client', (client) => {
      client.handle('BootNotification', async () => ({ status: 'Accepted', currentTime: new Date().toISOString(), interval: 300 }));
      client.handle('StatusNotification', async () => ({}));
      client.handle('Heartbeat', async () => ({ currentTime: new Date().toISOString() }));
    });
    const http = await rpc.listen(0, '127.0.0.1');
    try {
      const url = `ws://127.0.0.1:${(http.address() as AddressInfo).port}/ocpp`;
      const r = await simulate(['--url', url, '--identity', 'LOCAL-1', '--scenario', 'boot', '--local-address', '127.0.0.2', '--no-state']);
      expect(r.code).toBe(0);
      expect(seen.map((a) => a.replace(/^::ffff:/, ''))).toEqual(['127.0.0.2']);
    } finally {
      await rpc.close({ force: true });
    }
  });

  it('--count 1 and a one-line --csv are fleet mode: no meter kept unless --state-dir', async () => {
    const csv = path.join(home, 'one.csv');
    fs.writeFileSync(csv, 'identity,password\nONE-CSV-1,\n');
    const a = await simulate(['--url', server.url, '--count', '1', '--prefix', 'ONE-COUNT-', '--scenario', 'session', '--energy', '100']);
    const b = await simulate(['--url', server.url, '--csv', csv, '--scenario', 'session', '--energy', '100']);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(server.energyByIdentity().get('ONE-COUNT-1')).toBe(100);
    expect(server.energyByIdentity().get('ONE-CSV-1')).toBe(100);
    expect(fs.readdirSync(defaultState).filter((f) => f.startsWith('ONE-'))).toEqual([]);
    expect(fs.existsSync(path.join(home, '.ere-simulator'))).toBe(false);
    // a single --identity still keeps its meter by default; --state-dir keeps a fleet's
    await simulate(['--url', server.url, '--identity', 'ONE-SINGLE', '--scenario', 'boot']);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-sim-usage-dir-'));
    try {
      await simulate(['--url', server.url, '--count', '1', '--prefix', 'ONE-KEPT-', '--scenario', 'boot', '--state-dir', dir]);
      expect(fs.readdirSync(defaultState).filter((f) => f.startsWith('ONE-'))).toEqual(['ONE-SINGLE.json']);
      expect(fs.readdirSync(dir)).toEqual(['ONE-KEPT-1.json']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--verbose writes the connection events: connected, disconnected, connected again (storm)', async () => {
    const r = await simulate(['--url', server.url, '--identity', 'VERBOSE-EV', '--scenario', 'storm', '--no-state', '--verbose']);
    expect(r.code).toBe(0);
    const events = r.stderr.split('\n').filter((l) => /^VERBOSE-EV: (connected|disconnected)/.test(l));
    expect(events.map((l) => l.split(' ')[1])).toEqual(['connected', 'disconnected', 'connected', 'disconnected']);
    expect(events[0]).toMatch(/connected to ws:\/\/127\.0\.0\.1:\d+\/ocpp\/VERBOSE-EV \(ocpp1\.6\)/);
  });
});

describe('found by an outside audit of the simulator', () => {
  it('a refused connection (401) writes no meter state (D199)', async () => {
    const locked = await startBareServer({ credentials: new Map([['USAGE-401', 'the-right-password-1']]) });
    try {
      const r = await simulate(['--url', locked.url, '--identity', 'USAGE-401', '--password', 'a-wrong-password-12', '--scenario', 'boot']);
      expect(r.code).toBe(1);
      expect(fs.existsSync(path.join(defaultState, 'USAGE-401.json'))).toBe(false);
    } finally {
      await locked.close();
    }
  });

  it('fleet --scenario boot plays the boot scenario on every charger: boot, status, heartbeat, no idle wait (D200)', async () => {
    const t0 = Date.now();
    const r = await simulate(['--url', server.url, '--count', '3', '--prefix', 'FLEET-BOOT-', '--scenario', 'boot', '--duration', '120', '--json']);
    expect(r.code).toBe(0);
    // boot does not wait out the fleet's --duration (far from it, whatever the machine's load)
    expect(Date.now() - t0).toBeLessThan(60_000);
    for (const id of ['FLEET-BOOT-1', 'FLEET-BOOT-2', 'FLEET-BOOT-3']) expect(sent(id).map((c) => c.method)).toEqual(['BootNotification', 'StatusNotification', 'Heartbeat']);
    expect(JSON.parse(r.stdout).sessions).toBeUndefined();
  });

  it('--help describes the identities --count makes (padded to the count\'s width) (D201)', async () => {
    const r = await simulate(['--help']);
    expect(r.stdout).not.toMatch(/PREFIX0001/);
    const m = /PREFIX1\.\.PREFIXN zero-padded to N's\s+width \((PREFIX\w+)\.\.(PREFIX\w+) for 10\)/.exec(r.stdout);
    expect(m?.slice(1)).toEqual([identitiesFor('PREFIX', 10)[0], identitiesFor('PREFIX', 10)[9]]);
  });

  it('passwords: a CSV password with "," and \'"\' round-trips; --password-file; SIMULATOR_PASSWORD; the saved one is announced (D203)', async () => {
    const odd = 'pa,ss"word, with-1234';
    const locked = await startBareServer({
      record: true,
      credentials: new Map([
        ['PW-CSV-1', odd],
        ['PW-FILE-1', 'from-a-file-123456'],
        ['PW-ENV-1', 'from-the-env-123456'],
        ['PW-SAVED-1', 'set-by-the-csms-1234'],
      ]),
    });
    try {
      const csv = path.join(home, 'odd.csv');
      fs.writeFileSync(csv, `identity,password\nPW-CSV-1,"${odd.replace(/"/g, '""')}"\n`);
      const a = await simulate(['--url', locked.url, '--csv', csv, '--scenario', 'boot']);
      expect(a.code, a.stdout + a.stderr).toBe(0);
      const file = path.join(home, 'pw.txt');
      fs.writeFileSync(file, 'from-a-file-123456\n');
      const b = await simulate(['--url', locked.url, '--identity', 'PW-FILE-1', '--password-file', file, '--scenario', 'boot', '--no-state']);
      expect(b.code, b.stderr).toBe(0);
      const c = await simulate(['--url', locked.url, '--identity', 'PW-ENV-1', '--scenario', 'boot', '--no-state'], { SIMULATOR_PASSWORD: 'from-the-env-123456' });
      expect(c.code, c.stderr).toBe(0);
      // a password the central system set in an earlier run replaces the given one: the run says so
      fs.writeFileSync(
        path.join(defaultState, 'PW-SAVED-1.json'),
        JSON.stringify({ version: 1, identity: 'PW-SAVED-1', registers: { '1': 0 }, password: { value: 'set-by-the-csms-1234', replaces: null, at: '2026-01-01T00:00:00.000Z' }, updatedAt: '2026-01-01T00:00:00.000Z' }),
      );
      const d = await simulate(['--url', locked.url, '--identity', 'PW-SAVED-1', '--scenario', 'boot']);
      expect(d.code, d.stderr).toBe(0);
      expect(d.stderr).toMatch(/PW-SAVED-1: using the password the central system set on 2026-01-01T00:00:00.000Z \(kept in .*PW-SAVED-1\.json\) instead of none/);
    } finally {
      await locked.close();
    }
  });
});
