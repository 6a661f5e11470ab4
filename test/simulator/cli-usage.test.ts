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
import { defaultQuirks } from '../../simulator/scenarios/index.ts';

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

function simulate(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', cli, ...args],
      { cwd: path.resolve(import.meta.dirname, '../..'), env: { ...process.env, HOME: home, ERE_SIMULATOR_STATE_DIR: defaultState } },
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
  ];
  it.each(cases)('%s', async (_name, args, message) => {
    const identity = `USAGE-${Math.random().toString(16).slice(2, 8)}`;
    const r = await simulate(['--url', server.url, '--identity', identity, ...args]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toMatch(/\(see --help\)/);
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
