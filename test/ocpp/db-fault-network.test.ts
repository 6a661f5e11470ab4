// D263: the database behind a network that drops packets instead of refusing them. The proxy holds every byte (a
// blackhole) or closes PostgreSQL's side and leaves the service's side open and silent (a server gone, half-open
// connections): nothing tells the service. PostgreSQL's statement_timeout cannot help (the server never gets the
// statement); the client-side bound of every round trip does: a charger's transaction message gets CALLERROR
// InternalError and HTTP 503 with Retry-After within the bound, and a pool full of half-open connections recovers by
// itself. Short bounds through the test's own pool options (1.5 s per round trip, 2 s to get a connection).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RPCClient } from 'ocpp-rpc';
import { createTestService, type TestService } from '../helpers/app.ts';
import { proxiedDatabase } from '../helpers/db-proxy.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline } from '../helpers/ocpp-factories.ts';

/** far above the bound the service has here (a round trip 1.5 s, a connection 2 s, retries for at most 5 s) */
const LONG_MS = 20_000;

const outcome = (p: Promise<unknown>) =>
  p.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );

describe.skipIf(!process.env.DATABASE_URL)('D263: a database behind a network that drops packets', () => {
  let db: Awaited<ReturnType<typeof proxiedDatabase>>;
  let svc: TestService;

  beforeAll(async () => {
    db = await proxiedDatabase(5, { queryTimeoutMs: 1_500, connectTimeoutMs: 2_000 });
    svc = await createTestService({ listen: true, db: db.viaProxy });
  });
  afterAll(async () => {
    await svc?.close();
    await db?.close();
  });

  it('a blackhole: CALLERROR InternalError and HTTP 503 with Retry-After instead of no answer; stored once after it', { timeout: 60_000 }, async () => {
    const { at } = hourAgoTimeline();
    const user = await aUser(svc.deps);
    const ch = await anOcppCharger(svc, user);
    const cli: RPCClient = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: at(0) })) as { transactionId: number };
      const mv = { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(1), 300)] };
      expect((await fetch(`${svc.url}/chargers`, { headers: bearer(user.token) })).status).toBe(200);

      db.proxy.blackhole();
      const [answer, http] = await Promise.all([
        outcome(cli.call('MeterValues', mv, { callTimeoutMs: LONG_MS })),
        outcome(fetch(`${svc.url}/chargers`, { headers: bearer(user.token), signal: AbortSignal.timeout(LONG_MS) })),
      ]);
      // before: no answer at all until the network came back (the charger's own timeout, here LONG_MS)
      expect(answer).toMatchObject({ error: { rpcErrorCode: 'InternalError' } });
      expect(http).toHaveProperty('value');
      const res = (http as { value: Response }).value;
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');

      db.proxy.heal();
      // the charger sends it again; the pool works again on connections of its own
      expect(await cli.call('MeterValues', mv, { callTimeoutMs: LONG_MS })).toEqual({});
      expect((await fetch(`${svc.url}/chargers`, { headers: bearer(user.token) })).status).toBe(200);
    } finally {
      db.proxy.heal();
      await cli.close();
    }
    const rows = await db.direct.db.selectFrom('meter_readings').select('wh').where('charger_id', '=', ch.chargerId).orderBy('measured_at').execute();
    expect(rows.map((r) => r.wh)).toEqual(['0', '300']);
  });

  it("the server's side gone, the service's connections half-open: the pool drops them and recovers by itself", { timeout: 60_000 }, async () => {
    const { at } = hourAgoTimeline();
    const user = await aUser(svc.deps);
    const ch = await anOcppCharger(svc, user);
    const cli: RPCClient = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: at(0) })) as { transactionId: number };
      // every pooled connection open and idle
      await Promise.all(Array.from({ length: 5 }, () => fetch(`${svc.url}/chargers`, { headers: bearer(user.token) })));

      db.proxy.deadServer();
      // nothing resets those sockets (the proxy never will): before, every query sent on one waited for ever
      const first = await outcome(cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(1), 300)] }, { callTimeoutMs: LONG_MS }));
      // answered (stored on a new connection by the retry, or CALLERROR): not left hanging until the charger gives up
      if ('error' in first) expect(first.error).toMatchObject({ rpcErrorCode: 'InternalError' });
      else expect(first.value).toEqual({});
      let ok = false;
      for (let i = 0; i < 10 && !ok; i++) {
        const res = await fetch(`${svc.url}/chargers`, { headers: bearer(user.token), signal: AbortSignal.timeout(LONG_MS) });
        ok = res.status === 200;
        if (!ok) await new Promise((r) => setTimeout(r, 500));
      }
      expect(ok).toBe(true);
      expect(await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(2), 600)] }, { callTimeoutMs: LONG_MS })).toEqual({});
      expect((await fetch(`${svc.url}/readyz`, { signal: AbortSignal.timeout(LONG_MS) })).status).toBe(200);
    } finally {
      await cli.close();
    }
    const rows = await db.direct.db.selectFrom('meter_readings').select('wh').where('charger_id', '=', ch.chargerId).orderBy('measured_at').execute();
    expect(rows.map((r) => r.wh)).toContain('600');
  });
});
