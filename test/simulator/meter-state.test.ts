// The meter a simulated charger keeps between runs (simulator/meter-state.ts), in process against the bare server:
// besides the register (test/simulator/cli.test.ts), the settings and the password the central system set.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBareServer, type BareServer } from '../../simulator/bare-server.ts';
import { ChargePoint, PROTOCOLS } from '../../simulator/charge-point.ts';
import { stateFile } from '../../simulator/meter-state.ts';

const given = 'given-password-0001';
const rotated = 'rotated-password-9999';
let server: BareServer;
let dir: string;
const credentials = new Map<string, string>();

beforeAll(async () => {
  server = await startBareServer({ credentials });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-sim-meter-'));
});
afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe.each(PROTOCOLS)('meter state, %s', (protocol) => {
  const identity = `MS-${protocol}`;
  const charger = (password: string, keep = true) =>
    new ChargePoint({ url: server.url, identity, password, protocol, heartbeats: false, autoReconnect: false, stateDir: keep ? dir : undefined });

  it('keeps the register, a changed setting and a rotated password for the next run', async () => {
    credentials.set(identity, given);
    const cp = charger(given);
    await cp.start();
    const tx = await cp.beginTx({ connectorId: 1, idTag: 'T1', at: new Date(Date.now() - 3_600_000) });
    await cp.endTx(tx, 5_000, new Date(Date.now() - 60_000));
    const central = server.clients.get(identity)!;
    if (protocol === 'ocpp1.6') {
      expect(await central.call('ChangeConfiguration', { key: 'MeterValueSampleInterval', value: '30' })).toEqual({ status: 'Accepted' });
      const hex = Buffer.from(rotated).toString('hex');
      expect(await central.call('ChangeConfiguration', { key: 'AuthorizationKey', value: hex })).toEqual({ status: 'Accepted' });
    } else {
      const res = await central.call('SetVariables', {
        setVariableData: [
          { component: { name: 'SampledDataCtrlr' }, variable: { name: 'TxUpdatedInterval' }, attributeValue: '30' },
          { component: { name: 'SecurityCtrlr' }, variable: { name: 'BasicAuthPassword' }, attributeValue: rotated },
        ],
      });
      expect(res.setVariableResult.map((r: { attributeStatus: string }) => r.attributeStatus)).toEqual(['Accepted', 'Accepted']);
    }
    await cp.close();
    credentials.set(identity, rotated);

    const saved = JSON.parse(fs.readFileSync(stateFile(dir, identity), 'utf8'));
    expect(saved.registers).toEqual({ '1': 5000 });
    expect(Object.values(saved.settings)).toEqual(['30']);

    // the next run is given the old password (as the tester wrote it down) and uses the one the central system set
    const next = charger(given);
    expect(next.register(1)).toBe(5000);
    expect(next.opts.password).toBe(rotated);
    await next.start();
    const central2 = server.clients.get(identity)!;
    const interval =
      protocol === 'ocpp1.6'
        ? (await central2.call('GetConfiguration', { key: ['MeterValueSampleInterval'] })).configurationKey[0].value
        : (await central2.call('GetVariables', { getVariableData: [{ component: { name: 'SampledDataCtrlr' }, variable: { name: 'TxUpdatedInterval' } }] })).getVariableResult[0]
            .attributeValue;
    expect(interval).toBe('30');
    const tx2 = await next.beginTx({ connectorId: 1, idTag: 'T1', at: new Date() });
    expect(tx2.meterStartWh).toBe(5000);
    await next.endTx(tx2, 5_700, new Date());
    await next.close();

    // another password given explicitly wins over the kept one; no state directory: a new meter, nothing read
    expect(charger('another-password-42').opts.password).toBe('another-password-42');
    const fresh = charger(given, false);
    expect([fresh.register(1), fresh.opts.password]).toEqual([0, given]);
  });
});

it('a damaged state file stops the run instead of resetting the meter', () => {
  fs.writeFileSync(stateFile(dir, 'MS-BROKEN'), '{"version": 1, "identity": "MS-BROKEN", "registers": {"1": -5}}');
  expect(() => new ChargePoint({ url: server.url, identity: 'MS-BROKEN', protocol: 'ocpp1.6', stateDir: dir })).toThrow(/not a simulator meter state/);
});
