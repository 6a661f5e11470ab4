// The simulator against the bare reference server (strict schema validation on both sides): every message it
// sends is schema-valid, the energy it reports is the energy its messages carry, and it answers the central
// system's calls like a charger. No gateway involved.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBareServer, type BareServer } from '../../simulator/bare-server.ts';
import { ChargePoint, PROTOCOLS, splitPhases, whToKwhString } from '../../simulator/charge-point.ts';
import { planFor, runScenario } from '../../simulator/scenarios/index.ts';

let server: BareServer;
let n = 0;
const id = (tag: string) => `BARE-${tag}-${++n}`;

beforeAll(async () => {
  server = await startBareServer({ record: true, pendingBoots: 0 });
});
afterAll(async () => {
  await server.close();
});

function waitFor(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (cond()) return resolve();
      if (Date.now() - t0 > ms) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 20);
    };
    tick();
  });
}

describe('helpers', () => {
  it('splits a register into monotone phases that sum exactly, and writes kWh without floats', () => {
    for (let wh = 0; wh < 50; wh++) {
      const p = splitPhases(wh);
      expect(p[0] + p[1] + p[2]).toBe(wh);
      const q = splitPhases(wh + 1);
      expect(q.every((v, i) => v >= p[i]!)).toBe(true);
    }
    expect(whToKwhString(1_234_567)).toBe('1234.567');
    expect(whToKwhString(5)).toBe('0.005');
  });
});

describe.each(PROTOCOLS)('simulator against the bare server, %s', (protocol) => {
  it('session and month: the reported Wh is what the messages carry; nothing fails validation', async () => {
    for (const scenario of ['session', 'month'] as const) {
      const identity = id(scenario);
      const { result, cp } = await runScenario(
        scenario,
        { url: server.url, identity, protocol, initialRegisterWh: 1_000_000 },
        scenario === 'month' ? { month: '2026-09', seed: 7, sessions: 6 } : { energyWh: 12_345, meterIntervalS: 300 },
      );
      await cp.close();
      expect(result.errors).toEqual([]);
      expect(result.energyWh).toBe(scenario === 'session' ? 12_345 : planFor('month', { month: '2026-09', seed: 7, sessions: 6 }).reduce((s, p) => s + p.energyWh, 0));
      expect(server.energyByIdentity().get(identity)).toBe(result.energyWh);
      const calls = server.received.filter((r) => r.identity === identity).map((r) => r.method);
      expect(calls[0]).toBe('BootNotification');
      expect(calls).toContain(protocol === 'ocpp1.6' ? 'StopTransaction' : 'TransactionEvent');
    }
  });

  it('offline and quirks deliver the same total as the clean plan', async () => {
    const plan = planFor('offline', { sessions: 4, seed: 3 });
    const expected = plan.reduce((s, p) => s + p.energyWh, 0);
    for (const scenario of ['offline', 'quirks'] as const) {
      const identity = id(scenario);
      const { result, cp } = await runScenario(scenario, { url: server.url, identity, protocol }, { plan });
      await cp.close();
      expect(result.errors).toEqual([]);
      expect(result.energyWh).toBe(expected);
      expect(server.energyByIdentity().get(identity)).toBe(expected);
      if (scenario === 'offline') {
        const txCalls = server.received.filter((r) => r.identity === identity && r.method === 'TransactionEvent');
        if (protocol === 'ocpp2.0.1') expect(txCalls.some((r) => r.params.offline === true)).toBe(true);
      } else {
        const mv = server.received.filter((r) => r.identity === identity && (r.method === 'MeterValues' || r.method === 'TransactionEvent'));
        const sampled = mv.flatMap((r) => r.params.meterValue?.[0]?.sampledValue ?? []);
        expect(sampled.some((s: any) => s.phase === 'L1')).toBe(true);
        // the connector's registers come per phase only; the vehicle's figure and the inlet's register ride beside them
        expect(sampled.every((s: any) => s.measurand !== 'Energy.Active.Import.Register' || s.location !== 'Outlet' || s.phase)).toBe(true);
        expect(new Set(sampled.map((s: any) => s.location))).toEqual(new Set(['EV', 'Inlet', 'Outlet']));
        expect(result.quirks).toEqual(expect.arrayContaining(['kwh', 'other-locations']));
        if (protocol === 'ocpp1.6') expect(server.received.find((r) => r.identity === identity)!.protocol).toBe('ocpp1.6');
      }
    }
  });

  it('retries a Pending boot after the interval, answers Reset by rebooting and RemoteStop by stopping', async () => {
    const pendingServer = await startBareServer({ record: true, pendingBoots: 1, pendingIntervalS: 1 });
    const identity = id('cmd');
    const cp = new ChargePoint({ url: pendingServer.url, identity, protocol, rebootDelayMs: 100, minBootRetryMs: 100, liveMeterIntervalMs: 250, livePowerW: 7_400 });
    try {
      await cp.start();
      expect(cp.lastBootStatus).toBe('Accepted');
      expect(pendingServer.received.filter((r) => r.identity === identity && r.method === 'BootNotification')).toHaveLength(2);

      const { tx, done } = await cp.startLiveSession({ connectorId: 1 });
      await waitFor(() => tx.lastWh > tx.meterStartWh, 'a live reading');
      const server = pendingServer.clients.get(identity)!;
      const stop =
        protocol === 'ocpp1.6'
          ? await server.call('RemoteStopTransaction', { transactionId: Number(tx.transactionId) })
          : await server.call('RequestStopTransaction', { transactionId: tx.localId });
      expect(stop).toEqual({ status: 'Accepted' });
      const record = await done;
      expect(record.stopReason).toBe('Remote');
      expect(pendingServer.energyByIdentity().get(identity)).toBe(record.energyWh);
      expect(record.energyWh).toBeGreaterThan(0);

      if (protocol === 'ocpp1.6') {
        expect(await server.call('GetConfiguration', { key: ['HeartbeatInterval', 'Nope'] })).toEqual({
          configurationKey: [{ key: 'HeartbeatInterval', readonly: false, value: '300' }],
          unknownKey: ['Nope'],
        });
        expect(await server.call('ChangeConfiguration', { key: 'HeartbeatInterval', value: '120' })).toEqual({ status: 'Accepted' });
        expect(cp.heartbeatIntervalS).toBe(120);
      } else {
        const set = await server.call('SetVariables', {
          setVariableData: [{ attributeValue: '120', component: { name: 'OCPPCommCtrlr' }, variable: { name: 'HeartbeatInterval' } }],
        });
        expect(set).toEqual({ setVariableResult: [{ attributeStatus: 'Accepted', component: { name: 'OCPPCommCtrlr' }, variable: { name: 'HeartbeatInterval' } }] });
        const get = await server.call('GetVariables', { getVariableData: [{ component: { name: 'OCPPCommCtrlr' }, variable: { name: 'HeartbeatInterval' } }] });
        expect(get).toEqual({ getVariableResult: [{ attributeStatus: 'Accepted', attributeValue: '120', component: { name: 'OCPPCommCtrlr' }, variable: { name: 'HeartbeatInterval' } }] });
      }
      // calls both protocols answer alike
      expect(await server.call('ClearCache', {})).toEqual({ status: 'Accepted' });
      expect(await server.call('DataTransfer', { vendorId: 'com.example' })).toEqual({ status: 'UnknownVendorId' });
      expect(await server.call('TriggerMessage', { requestedMessage: 'Heartbeat' })).toEqual({ status: 'Accepted' });
      await waitFor(() => pendingServer.received.some((r) => r.identity === identity && r.method === 'Heartbeat'), 'a triggered heartbeat');

      const boots = cp.bootCount;
      expect(await server.call('Reset', protocol === 'ocpp1.6' ? { type: 'Hard' } : { type: 'Immediate' })).toEqual({ status: 'Accepted' });
      await waitFor(() => cp.bootCount > boots && cp.connected, 'the reboot');
      expect(pendingServer.clients.get(identity)).not.toBe(server);
    } finally {
      await cp.close();
      await pendingServer.close();
    }
  });
});

describe('2.0.1 TriggerMessage TransactionEvent', () => {
  it('answers with a TransactionEvent Updated of triggerReason Trigger and context Trigger, not a periodic sample', async () => {
    const identity = id('trigger');
    const cp = new ChargePoint({ url: server.url, identity, protocol: 'ocpp2.0.1', liveMeterIntervalMs: 60_000 });
    try {
      await cp.start();
      const { tx } = await cp.startLiveSession({ connectorId: 1 });
      const before = server.received.filter((r) => r.identity === identity && r.method === 'TransactionEvent').length;
      expect(await server.clients.get(identity)!.call('TriggerMessage', { requestedMessage: 'TransactionEvent', evse: { id: 1 } })).toEqual({ status: 'Accepted' });
      await waitFor(() => server.received.filter((r) => r.identity === identity && r.method === 'TransactionEvent').length > before, 'the triggered TransactionEvent');
      const triggered = server.received.filter((r) => r.identity === identity && r.method === 'TransactionEvent').at(-1)!.params;
      expect(triggered).toMatchObject({ eventType: 'Updated', triggerReason: 'Trigger', transactionInfo: { transactionId: tx.localId } });
      const sampled = triggered.meterValue[0].sampledValue;
      expect(sampled.length).toBeGreaterThan(0);
      for (const v of sampled) expect(v.context).toBe('Trigger');
    } finally {
      await cp.close();
    }
  });
});

describe('network loss', () => {
  it('logs the connection events: connected, disconnected, reconnected', async () => {
    const identity = id('events');
    const lines: string[] = [];
    const cp = new ChargePoint({ url: server.url, identity, protocol: 'ocpp1.6', log: (l) => lines.push(l) });
    try {
      await cp.start();
      await server.clients.get(identity)!.close({ force: true });
      await waitFor(() => lines.some((l) => l.includes('reconnected')), 'the reconnect', 15_000);
      const events = lines.filter((l) => /: (connected|disconnected|reconnected)/.test(l)).map((l) => l.slice(identity.length + 2).split(' ')[0]);
      expect(events).toEqual(['connected', 'disconnected', 'connected', 'reconnected']);
      expect(lines.find((l) => l.includes('reconnected'))).toMatch(/after 1 attempt\(s\) \(resumed, no new BootNotification\)/);
    } finally {
      await cp.close();
    }
    expect(lines.at(-1)).toMatch(/: disconnected/);
  });

  it('reconnects by itself after the central system drops it, without a new BootNotification, and replays what it queued', async () => {
    const identity = id('drop');
    const cp = new ChargePoint({ url: server.url, identity, protocol: 'ocpp1.6' });
    try {
      await cp.start();
      const first = server.clients.get(identity)!;
      await first.close({ force: true });
      await waitFor(() => !cp.connected, 'the drop');
      // a reading taken while the connection is down is queued
      const tx = await cp.beginTx({ connectorId: 1, idTag: 'TAG', at: new Date(Date.now() - 60_000) });
      expect(cp.queuedCount).toBe(1);
      await waitFor(() => cp.connected && cp.queuedCount === 0, 'the reconnect and replay');
      expect(server.clients.get(identity)).not.toBe(first);
      expect(tx.transactionId).toEqual(expect.any(Number));
      const methods = server.received.filter((r) => r.identity === identity).map((r) => r.method);
      expect(methods.filter((m) => m === 'BootNotification')).toHaveLength(1);
      expect(methods.slice(-2)).toEqual(['StatusNotification', 'StartTransaction']);
      expect(cp.stats.booted).toBe(1);
    } finally {
      await cp.close();
    }
  });
});
