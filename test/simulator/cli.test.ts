// The CLI is a thin parser over the library: run it as a separate process against the bare reference server
// and check its JSON output and its human output (the energy line testers compare with the central system).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBareServer, type BareServer } from '../../simulator/bare-server.ts';

const run = promisify(execFile);
const cli = path.resolve(import.meta.dirname, '../../simulator/cli.ts');
let server: BareServer;

beforeAll(async () => {
  server = await startBareServer({ record: true });
});
afterAll(async () => {
  await server.close();
});

const simulate = (args: string[]) => run(process.execPath, ['--import', 'tsx', cli, ...args], { cwd: path.resolve(import.meta.dirname, '../..') });

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
});
