// The CLI is a thin parser over the library: run it as a separate process against the bare reference server
// and check its JSON output and its human output (the energy line testers compare with the central system).
import { execFile, fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBareServer, type BareServer } from '../../simulator/bare-server.ts';

const run = promisify(execFile);
const cli = path.resolve(import.meta.dirname, '../../simulator/cli.ts');
let server: BareServer;
// the default state directory of these runs (a single charger keeps its meter unless told otherwise): never $HOME
const defaultState = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-sim-default-state-'));

beforeAll(async () => {
  server = await startBareServer({ record: true });
});
afterAll(async () => {
  await server.close();
  fs.rmSync(defaultState, { recursive: true, force: true });
});

const simulate = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, ['--import', 'tsx', cli, ...args], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: { ...process.env, ERE_SIMULATOR_STATE_DIR: defaultState, ...env },
  });
const sent = (identity: string, method: string) => server.received.filter((r) => r.identity === identity && r.method === method);

describe('npm run simulate', () => {
  it('session with --json reports the energy the server received', async () => {
    const { stdout } = await simulate(['--url', server.url, '--identity', 'CLI-1', '--protocol', 'ocpp2.0.1', '--scenario', 'session', '--energy', '4321', '--json']);
    const result = JSON.parse(stdout);
    expect(result).toMatchObject({ scenario: 'session', identity: 'CLI-1', protocol: 'ocpp2.0.1', energyWh: 4321, errors: [] });
    expect(server.energyByIdentity().get('CLI-1')).toBe(4321);
    const boot = server.received.find((r) => r.identity === 'CLI-1' && r.method === 'BootNotification');
    expect(boot?.params.chargingStation).toMatchObject({ vendorName: 'Alfen BV', model: 'NG910-60023' });
  });

  it('fleet mode prints a summary and the energy line; bad options exit 2', async () => {
    const { stdout } = await simulate(['--url', server.url, '--count', '3', '--prefix', 'CLI-F-', '--scenario', 'session', '--energy', '1000', '--vendor', 'Acme', '--model', 'X1']);
    expect(stdout).toMatch(/fleet session: 3\/3 charge points booted/);
    expect(stdout).toMatch(/energy delivered: 3000 Wh/);
    expect(['CLI-F-1', 'CLI-F-2', 'CLI-F-3'].map((i) => server.energyByIdentity().get(i))).toEqual([1000, 1000, 1000]);
    expect(server.received.find((r) => r.identity === 'CLI-F-1' && r.method === 'BootNotification')?.params).toMatchObject({ chargePointVendor: 'Acme', chargePointModel: 'X1' });
    await expect(simulate(['--url', 'http://nope', '--scenario', 'boot'])).rejects.toMatchObject({ code: 2 });
  });

  it('--wait-go holds the workload until the parent says go (several drivers start together); without a parent it exits 2', { timeout: 60_000 }, async () => {
    const child = fork(cli, ['--url', server.url, '--count', '3', '--prefix', 'CLI-GO-', '--scenario', 'load', '--rate', '3', '--duration', '2', '--wait-go', '--json'], {
      execArgv: ['--import', 'tsx'],
      cwd: path.resolve(import.meta.dirname, '../..'),
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: { ...process.env, ERE_SIMULATOR_STATE_DIR: defaultState },
    });
    const phases: string[] = [];
    const summary = new Promise<any>((resolve) => child.on('message', (m: any) => m?.type === 'summary' && resolve(m.summary)));
    const connected = new Promise<void>((resolve) =>
      child.on('message', (m: any) => {
        if (m?.type !== 'phase') return;
        phases.push(m.phase);
        if (m.phase === 'connected') resolve();
      }),
    );
    await connected;
    // connected and booted, then waiting: a second later still no workload and no transaction
    await new Promise((r) => setTimeout(r, 1_000));
    expect(phases).toEqual(['connected']);
    expect(['CLI-GO-1', 'CLI-GO-2', 'CLI-GO-3'].flatMap((i) => sent(i, 'StartTransaction'))).toHaveLength(0);
    child.send({ cmd: 'go' });
    const s = await summary;
    expect(phases.slice(0, 2)).toEqual(['connected', 'workload-start']);
    expect(s.booted).toBe(3);
    expect(['CLI-GO-1', 'CLI-GO-2', 'CLI-GO-3'].flatMap((i) => sent(i, 'StartTransaction'))).toHaveLength(3);
    await new Promise((r) => child.once('exit', r));
    await expect(simulate(['--url', server.url, '--count', '2', '--scenario', 'load', '--wait-go'])).rejects.toMatchObject({ code: 2 });
  });

  it('a charger keeps its meter: two runs of one identity continue the register; --no-state starts afresh', { timeout: 120_000 }, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-sim-state-'));
    try {
      for (const protocol of ['ocpp1.6', 'ocpp2.0.1']) {
        const id = `CLI-M-${protocol}`;
        const session = async (wh: number) =>
          JSON.parse((await simulate(['--url', server.url, '--identity', id, '--protocol', protocol, '--scenario', 'session', '--energy', String(wh), '--state-dir', dir, '--json'])).stdout);
        const first = await session(1500);
        const second = await session(2500);
        expect(first.sessions[0]).toMatchObject({ meterStartWh: 0, meterStopWh: 1500 });
        expect(second.sessions[0]).toMatchObject({ meterStartWh: 1500, meterStopWh: 4000, energyWh: 2500 });
        // what the central system saw: the second transaction starts at the first one's end reading
        const starts =
          protocol === 'ocpp1.6'
            ? sent(id, 'StartTransaction').map((r) => r.params.meterStart)
            : sent(id, 'TransactionEvent').filter((r) => r.params.eventType === 'Started').map((r) => r.params.meterValue[0].sampledValue[0].value);
        expect(starts).toEqual([0, 1500]);
        const file = path.join(dir, `${id}.json`);
        expect(JSON.parse(fs.readFileSync(file, 'utf8'))).toMatchObject({ version: 1, identity: id, registers: { '1': 4000 } });
        expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      }
      // a new meter on request, and nothing written
      const fresh = JSON.parse((await simulate(['--url', server.url, '--identity', 'CLI-M-ocpp1.6', '--scenario', 'session', '--energy', '100', '--no-state', '--json'])).stdout);
      expect(fresh.sessions[0].meterStartWh).toBe(0);
      expect(JSON.parse(fs.readFileSync(path.join(dir, 'CLI-M-ocpp1.6.json'), 'utf8')).registers['1']).toBe(4000);
      // the default directory (ERE_SIMULATOR_STATE_DIR here) for one charger; a fleet writes none unless asked
      await simulate(['--url', server.url, '--identity', 'CLI-D-1', '--scenario', 'boot']);
      await simulate(['--url', server.url, '--count', '2', '--prefix', 'CLI-DF-', '--scenario', 'session', '--energy', '100']);
      expect(fs.readdirSync(defaultState).filter((f) => f.startsWith('CLI-D')).sort()).toEqual(['CLI-D-1.json']);
      await simulate(['--url', server.url, '--count', '2', '--prefix', 'CLI-SF-', '--scenario', 'session', '--energy', '100', '--state-dir', dir]);
      expect(fs.readdirSync(dir).filter((f) => f.startsWith('CLI-SF-')).sort()).toEqual(['CLI-SF-1.json', 'CLI-SF-2.json']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--verbose prints every OCPP frame both ways, with the identity, as compact JSON', async () => {
    const { stderr } = await simulate(['--url', server.url, '--identity', 'CLI-V', '--protocol', 'ocpp2.0.1', '--scenario', 'session', '--energy', '500', '--verbose']);
    const frames = stderr.split('\n').filter((l) => /^CLI-V [→←] /.test(l));
    const out = frames.filter((l) => l.startsWith('CLI-V → ')).map((l) => JSON.parse(l.slice('CLI-V → '.length)));
    const back = frames.filter((l) => l.startsWith('CLI-V ← ')).map((l) => JSON.parse(l.slice('CLI-V ← '.length)));
    // every call the server received was printed, and every answer to it
    const calls = out.filter((f) => f[0] === 2);
    expect(calls.map((f) => f[2])).toEqual(server.received.filter((r) => r.identity === 'CLI-V').map((r) => r.method));
    expect(back.filter((f) => f[0] === 3).map((f) => f[1]).sort()).toEqual(calls.map((f) => f[1]).sort());
    expect(calls[0]).toMatchObject([2, expect.any(String), 'BootNotification', { reason: 'PowerUp' }]);
    for (const l of frames) expect(l).not.toMatch(/\n|  /);
  });
});
