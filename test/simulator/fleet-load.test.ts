// The load workload's shape against the bare server: with spread starts each charger starts its transaction at its
// own phase of the first period and stops it at its phase of the last, so a fleet never sends all its
// StopTransactions in the same second; every charger still starts, reads and stops exactly once. With a replay share,
// that share of the periodic readings is sent a second time, the same reading right after its answer. With idle
// readings, no transaction: each charger sends its idle connector's clock-aligned register reading instead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBareServer, type BareServer } from '../../simulator/bare-server.ts';
import { type FleetOptions, identitiesFor, runFleet } from '../../simulator/load.ts';

let server: BareServer;
beforeAll(async () => {
  server = await startBareServer({ record: true, pendingBoots: 0 });
});
afterAll(async () => {
  await server.close();
});

/** The load workload of `ids` against the bare server at 10 MeterValues a second, with `o` on top. */
const loadOf = (ids: string[], o: Partial<FleetOptions>) =>
  runFleet({
    url: server.url,
    protocol: 'ocpp1.6',
    credentials: ids.map((identity) => ({ identity, password: undefined })),
    rampPerSecond: 200,
    workload: 'load',
    ratePerSecond: 10,
    ...o,
  });

describe('fleet load workload', () => {
  it('spread starts: starts in the first period, stops spread over the last, none in the steady window', { timeout: 60_000 }, async () => {
    const ids = identitiesFor('SPREAD-', 30);
    const stopsNow = () => server.received.filter((r) => ids.includes(r.identity) && r.method === 'StopTransaction').length;
    const marks: Record<string, number> = {};
    let midLastPeriod: Promise<number> | undefined;
    // 30 chargers at 10 MeterValues a second: a 3 s period; 10 s of workload, so the last period is 7–10 s
    const summary = await loadOf(ids, {
      durationS: 10,
      spreadStarts: true,
      onPhase: (phase) => {
        marks[phase] = stopsNow();
        if (phase === 'workload-start') midLastPeriod = new Promise((resolve) => setTimeout(() => resolve(stopsNow()), 8_500));
      },
    });
    expect(summary.booted).toBe(30);
    expect(summary.messages.errors).toBe(0);
    expect(marks['steady-start']).toBe(0);
    expect(marks['steady-end']).toBe(0); // the steady window closes before the first stop
    const mid = await midLastPeriod!;
    expect(mid).toBeGreaterThan(0); // some chargers stopped in the first half of the last period …
    expect(mid).toBeLessThan(30); // … and some in the second
    expect(stopsNow()).toBe(30);
    expect(server.received.filter((r) => ids.includes(r.identity) && r.method === 'StartTransaction')).toHaveLength(30);
    expect(summary.periodic_acked.count).toBeGreaterThanOrEqual(30);
  });

  it('replay share: every periodic reading sent twice at share 1, the second a copy of the first; counted once', { timeout: 60_000 }, async () => {
    const ids = identitiesFor('REPLAY-', 10);
    const summary = await loadOf(ids, { durationS: 4, replayShare: 1 });
    expect(summary.messages.errors).toBe(0);
    const periodic = server.received.filter((r) => ids.includes(r.identity) && r.method === 'MeterValues');
    expect(periodic.length).toBe(2 * summary.periodic_acked.count);
    expect(summary.periodic_acked.count).toBeGreaterThanOrEqual(10);
    for (const id of ids) {
      const mine = periodic.filter((r) => r.identity === id).map((r) => JSON.stringify(r.params));
      for (let i = 0; i < mine.length; i += 2) expect(mine[i + 1]).toBe(mine[i]);
    }
  });

  it('idle readings: no transaction, clock-aligned register readings without a transaction id at the rate', { timeout: 60_000 }, async () => {
    const ids = identitiesFor('IDLE-', 10);
    const summary = await loadOf(ids, { durationS: 4, idleReadings: true });
    expect(summary.messages.errors).toBe(0);
    const mine = server.received.filter((r) => ids.includes(r.identity));
    expect(mine.filter((r) => r.method === 'StartTransaction' || r.method === 'StopTransaction')).toEqual([]);
    const readings = mine.filter((r) => r.method === 'MeterValues');
    expect(readings.length).toBe(summary.periodic_acked.count);
    expect(readings.length).toBeGreaterThanOrEqual(10);
    for (const r of readings) {
      expect(r.params.transactionId).toBeUndefined();
      expect(r.params.meterValue[0].sampledValue[0]).toMatchObject({ measurand: 'Energy.Active.Import.Register', context: 'Sample.Clock' });
      // clock-aligned: on the meter interval's boundaries (60 s by default: whole minutes)
      expect(Date.parse(r.params.meterValue[0].timestamp) % 60_000).toBe(0);
    }
  });

  it('a scenario workload plays on the chargers the ramp-up connected: one connection and one boot each', { timeout: 60_000 }, async () => {
    const ids = identitiesFor('FLEET-SCN-', 3);
    const summary = await runFleet({
      url: server.url,
      protocol: 'ocpp1.6',
      credentials: ids.map((identity) => ({ identity, password: undefined })),
      rampPerSecond: 200,
      workload: 'session',
      scenarioParams: { energyWh: 1_000 },
      // the peak is sampled with the progress line: often enough to see a second socket per charger
      progressMs: 50,
    });
    expect(summary).toMatchObject({ booted: 3, connect_failures: 0, energy_wh: 3_000, sessions: { charged: 3, rejected: 0 } });
    expect(summary.messages.errors).toBe(0);
    expect(summary.connected_peak).toBe(3);
    for (const id of ids) {
      expect(server.received.filter((r) => r.identity === id && r.method === 'BootNotification')).toHaveLength(1);
      expect(server.energyByIdentity().get(id)).toBe(1_000);
    }
  });
});
