// The simulator against the in-process gateway (issue 5 "what must be shown"): for both protocols the Wh the
// simulator reports equals the Wh the gateway stores (charging_sessions.energy_wh) and GET /sessions reports;
// offline and quirks runs of the same sessions end with the same totals as a clean run; the simulator answers
// a Reset and a RemoteStop sent through the admin command endpoint; fleet mode with a small N.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundledCatalog } from '../../src/domain/catalog/load.ts';
import { ChargePoint, PROTOCOLS, type SessionRecord } from '../../simulator/charge-point.ts';
import { identitiesFor, runFleet } from '../../simulator/load.ts';
import { registerChargers, type Credential } from '../../simulator/register.ts';
import { planFor, runScenario } from '../../simulator/scenarios/index.ts';
import { previousMonth } from '../../simulator/scenarios/plan.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aUser, bearer } from '../helpers/factories.ts';

let svc: TestService;
let ocppUrl: string;
let token: string;
let seq = 0;

beforeAll(async () => {
  // a 1 s interval: the Pending retry (BootNotification answers Pending with the heartbeat interval) is quick
  svc = await createTestService({ listen: true, env: { HEARTBEAT_INTERVAL_SECONDS: '1' } });
  await loadBundledCatalog(svc.deps.db);
  token = (await aUser(svc.deps)).token;
  ocppUrl = svc.url.replace(/^http/, 'ws') + '/ocpp';
});
afterAll(async () => {
  await svc?.close();
});

/** register identities through the Personal API exactly as `--register` does */
async function register(n = 1, tag = 'GW'): Promise<Credential[]> {
  const ids = identitiesFor(`SIM-${tag}-${++seq}-`, n);
  const { credentials } = await registerChargers({ apiUrl: svc.url, identities: ids, token });
  return credentials;
}

async function chargerId(identity: string): Promise<string> {
  const row = await svc.deps.db.selectFrom('chargers').select('id').where('ocpp_identity', '=', identity).executeTakeFirstOrThrow();
  return row.id;
}

async function storedSessions(identity: string) {
  const id = await chargerId(identity);
  const rows = await svc.deps.db
    .selectFrom('charging_sessions')
    .select(['transaction_id', 'energy_wh', 'status', 'started_at', 'ended_at'])
    .where('charger_id', '=', id)
    .orderBy('started_at')
    .execute();
  return { id, rows, total: rows.reduce((s, r) => s + Number(r.energy_wh), 0) };
}

/** kWh with 2 decimals (half up) from integer Wh, as the Personal API rounds */
const kwh2 = (wh: number) => Math.floor((wh + 5) / 10) / 100;

async function apiSessions(chargerIdValue: string): Promise<Array<{ kwh: number; started_at: string; status: string }>> {
  const res = await svc.app.inject({ method: 'GET', url: `/sessions?charger_id=${chargerIdValue}&limit=100`, headers: bearer(token) });
  expect(res.statusCode).toBe(200);
  return res.json().sessions;
}

async function expectGatewayMatches(identity: string, sessions: SessionRecord[], reportedWh: number): Promise<void> {
  const stored = await storedSessions(identity);
  expect(stored.total).toBe(reportedWh);
  expect(stored.rows).toHaveLength(sessions.length);
  for (const s of sessions) {
    const row = stored.rows.find((r) => r.transaction_id === s.transactionId);
    expect(row, `session ${s.transactionId}`).toBeDefined();
    expect(Number(row!.energy_wh)).toBe(s.energyWh);
    expect(row!.status).toBe('completed');
  }
  const api = await apiSessions(stored.id);
  expect(api).toHaveLength(sessions.length);
  const byStart = new Map(api.map((a) => [a.started_at, a]));
  const second = (t: string) => t.replace(/\.\d+Z$/, 'Z');
  for (const s of sessions) expect(byStart.get(second(s.startedAt))?.kwh, `kwh of ${s.startedAt}`).toBe(kwh2(s.energyWh));
}

function waitFor(cond: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const tick = async () => {
      if (await cond()) return resolve();
      if (Date.now() - t0 > ms) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(() => void tick(), 25);
    };
    void tick();
  });
}

describe.each(PROTOCOLS)('simulator against the gateway, %s', (protocol) => {
  it('session: the reported Wh is the Wh stored and the kWh GET /sessions shows', async () => {
    const [c] = await register();
    const { result, cp } = await runScenario('session', { url: ocppUrl, protocol, ...c! }, { energyWh: 12_345, meterIntervalS: 300 });
    await cp.close();
    expect(result.errors).toEqual([]);
    expect(result.energyWh).toBe(12_345);
    await expectGatewayMatches(c!.identity, result.sessions, 12_345);
  });

  it('month: a month of home charging, stored and listed with the same Wh', async () => {
    const [c] = await register();
    const params = { month: previousMonth(), seed: 11, sessions: 6 };
    const { result, cp } = await runScenario('month', { url: ocppUrl, protocol, initialRegisterWh: 2_500_000, ...c! }, params);
    await cp.close();
    expect(result.errors).toEqual([]);
    expect(result.sessions.length).toBeGreaterThan(0);
    expect(result.energyWh).toBe(planFor('month', params).reduce((s, p) => s + p.energyWh, 0));
    await expectGatewayMatches(c!.identity, result.sessions, result.energyWh);
  });

  it('offline and quirks runs of the same sessions end with the same totals as a clean run', async () => {
    const plan = planFor('offline', { sessions: 4, seed: 5 });
    const expected = plan.reduce((s, p) => s + p.energyWh, 0);
    const [clean, offline, quirky] = await register(3, 'OQ');
    const totals: Record<string, number> = {};
    for (const [name, cred] of [['session', clean], ['offline', offline], ['quirks', quirky]] as const) {
      // the clean run plays the same plan through the session scenario
      const { result, cp } = await runScenario(name, { url: ocppUrl, protocol, initialRegisterWh: 750_000, ...cred! }, { plan });
      await cp.close();
      expect(result.errors, name).toEqual([]);
      expect(result.energyWh, name).toBe(expected);
      totals[name] = (await storedSessions(cred!.identity)).total;
      await expectGatewayMatches(cred!.identity, result.sessions, expected);
    }
    expect(totals).toEqual({ session: expected, offline: expected, quirks: expected });
  });

  it('Wh values sent with unit kWh (a broken firmware) are flagged, never counted a thousandfold', async () => {
    const [c] = await register(1, 'MIS');
    const { result, cp } = await runScenario('quirks', { url: ocppUrl, protocol, quirks: ['wh-as-kwh'], initialRegisterWh: 500_000, ...c! }, { sessions: 2, seed: 1 });
    await cp.close();
    expect(result.errors).toEqual([]);
    const stored = await storedSessions(c!.identity);
    expect(stored.rows).toHaveLength(2);
    expect(stored.total).toBeLessThanOrEqual(result.energyWh);
    const flagged = await svc.deps.db
      .selectFrom('meter_readings')
      .select('anomaly')
      .where('charger_id', '=', stored.id)
      .where('anomaly', 'is not', null)
      .execute();
    expect(flagged.length).toBeGreaterThan(0);
  });

  it('waits through Pending: retries BootNotification after the interval until the operator accepts it', async () => {
    const [c] = await register(1, 'PEND');
    const id = await chargerId(c!.identity);
    const setStatus = (status: string) =>
      svc.app.inject({ method: 'PUT', url: `/admin/chargers/${id}/registration`, headers: bearer(TEST_ADMIN_TOKEN), payload: { status } });
    expect((await setStatus('Pending')).statusCode).toBe(200);
    const cp = new ChargePoint({ url: ocppUrl, protocol, ...c! });
    const statuses: string[] = [];
    cp.on('bootStatus', (s: string) => statuses.push(s));
    try {
      const started = cp.start();
      await waitFor(() => statuses.length >= 2, 'a second Pending boot');
      expect(cp.booted).toBe(false);
      expect((await setStatus('Accepted')).statusCode).toBe(200);
      await started;
      expect(cp.booted).toBe(true);
      expect(statuses[0]).toBe('Pending');
      expect(statuses.at(-1)).toBe('Accepted');
      expect(cp.heartbeatIntervalS).toBe(1);
    } finally {
      await cp.close();
    }
  });

  it('answers a RemoteStop and a Reset sent through the admin command endpoint', async () => {
    const [c] = await register();
    const cp = new ChargePoint({ url: ocppUrl, protocol, ...c!, liveMeterIntervalMs: 250, livePowerW: 7_400, rebootDelayMs: 100 });
    try {
      await cp.start();
      const id = await chargerId(c!.identity);
      const { tx, done } = await cp.startLiveSession({ connectorId: 1 });
      await waitFor(() => tx.lastWh > tx.meterStartWh, 'a live reading');

      const stop = await svc.app.inject({
        method: 'POST',
        url: `/admin/chargers/${id}/commands`,
        headers: bearer(TEST_ADMIN_TOKEN),
        payload:
          protocol === 'ocpp1.6'
            ? { action: 'RemoteStopTransaction', payload: { transactionId: Number(tx.transactionId) } }
            : { action: 'RequestStopTransaction', payload: { transactionId: tx.localId } },
      });
      expect(stop.statusCode).toBe(200);
      expect(stop.json()).toEqual({ ok: true, action: protocol === 'ocpp1.6' ? 'RemoteStopTransaction' : 'RequestStopTransaction', response: { status: 'Accepted' } });
      const record = await done;
      expect(record.stopReason).toBe('Remote');
      await waitFor(async () => (await storedSessions(c!.identity)).rows[0]?.status === 'completed', 'the stored stop');
      await expectGatewayMatches(c!.identity, [record], record.energyWh);

      const boots = cp.bootCount;
      const reset = await svc.app.inject({
        method: 'POST',
        url: `/admin/chargers/${id}/commands`,
        headers: bearer(TEST_ADMIN_TOKEN),
        payload: { action: 'Reset', payload: protocol === 'ocpp1.6' ? { type: 'Hard' } : { type: 'Immediate' } },
      });
      expect(reset.statusCode).toBe(200);
      expect(reset.json()).toEqual({ ok: true, action: 'Reset', response: { status: 'Accepted' } });
      await waitFor(() => cp.bootCount > boots && cp.connected, 'the reboot and new BootNotification');
      expect(cp.received.map((r) => r.method)).toEqual([protocol === 'ocpp1.6' ? 'RemoteStopTransaction' : 'RequestStopTransaction', 'Reset']);
    } finally {
      await cp.close();
    }
  });
});

describe('1.6 StopTransaction variants', () => {
  // the simulator's default StopTransaction carries the end reading again as transactionData (as most chargers
  // do; the tests above); a charger that sends meterStop alone must give the same session
  it('a StopTransaction with meterStop only (no transactionData) closes the session with the same Wh', async () => {
    const [c] = await register(1, 'TD');
    const { result, cp } = await runScenario('session', { url: ocppUrl, protocol: 'ocpp1.6', stopTransactionData: false, ...c! }, { energyWh: 8_000, meterIntervalS: 600 });
    await cp.close();
    expect(result.errors).toEqual([]);
    await expectGatewayMatches(c!.identity, result.sessions, 8_000);
  });
});

describe('fleet mode', () => {
  it('registers a small fleet through the admin API, runs a session on every charger and matches the gateway total', async () => {
    // --register --admin-token: a new owner and personal token through the admin API, then POST /chargers
    const { credentials, token: ownerToken } = await registerChargers({ apiUrl: svc.url, identities: identitiesFor(`SIM-FL-${++seq}-`, 3), adminToken: TEST_ADMIN_TOKEN });
    expect(credentials.every((c) => typeof c.password === 'string' && c.password.length >= 16)).toBe(true);
    const listed = await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(ownerToken) });
    expect(listed.statusCode).toBe(200);
    expect(listed.json().chargers).toHaveLength(3);
    const summary = await runFleet({
      url: ocppUrl,
      protocol: 'ocpp1.6',
      credentials,
      workload: 'session',
      scenarioParams: { energyWh: 5_000, meterIntervalS: 600 },
      rampPerSecond: 20,
      storm: true,
    });
    expect(summary.connect_failures).toBe(0);
    expect(summary.booted).toBe(3);
    expect(summary.messages.errors).toBe(0);
    expect(summary.energy_wh).toBe(15_000);
    expect(summary.storm).toMatchObject({ dropped: 3, rebooted: 3, failed: 0 });
    let total = 0;
    for (const c of credentials) total += (await storedSessions(c.identity)).total;
    expect(total).toBe(15_000);
  });
});
