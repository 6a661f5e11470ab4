// --realtime with --minutes (found by an outside audit of the simulator, D198): the live session lasts that long, at
// the power that delivers --energy in it (or at --power without an energy limit when no energy is given); it used to
// run until --energy was delivered at --power, whatever --minutes said. A time scale of 30 keeps the minute to 2 s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBareServer, type BareServer } from '../../simulator/bare-server.ts';
import { runScenario } from '../../simulator/scenarios/index.ts';

let server: BareServer;
beforeAll(async () => {
  server = await startBareServer({ record: true });
});
afterAll(async () => {
  await server.close();
});

describe('session --realtime --minutes', () => {
  it('--energy and --minutes: the energy in that time', async () => {
    const t0 = performance.now();
    const { result, cp } = await runScenario(
      'session',
      { url: server.url, identity: 'RT-MIN-1', protocol: 'ocpp1.6', liveTimeScale: 30, liveMeterIntervalMs: 250 },
      { realtime: true, energyWh: 500, durationS: 60 },
    );
    await cp.close();
    const s = (performance.now() - t0) / 1000;
    // 60 simulated seconds at 30x: 2 s (at the default 7400 W, 500 Wh took 243 simulated seconds: 8 s); timers never
    // fire early, a loaded machine fires them late: the bound above tells the two apart with room
    expect(s).toBeGreaterThan(1.8);
    expect(s).toBeLessThan(6.5);
    expect(result.energyWh).toBe(500);
    expect(result.sessions[0]?.stopReason).toBe('EVDisconnected');
  });

  it('--minutes alone: at --power for that long', async () => {
    const t0 = performance.now();
    const { result, cp } = await runScenario(
      'session',
      { url: server.url, identity: 'RT-MIN-2', protocol: 'ocpp2.0.1', liveTimeScale: 30, liveMeterIntervalMs: 250 },
      { realtime: true, powerW: 36_000, durationS: 60 },
    );
    await cp.close();
    const s = (performance.now() - t0) / 1000;
    expect(s).toBeLessThan(12);
    // 36 kW for a minute: 600 Wh, give or take a watt-hour of rounding and the timer's lateness; the old code stopped at
    // 10 kWh after 1000 simulated seconds (33 s)
    expect(result.energyWh).toBeGreaterThanOrEqual(595);
    expect(result.energyWh).toBeLessThan(700);
  });
});
