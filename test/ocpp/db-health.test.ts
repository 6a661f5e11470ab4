// D224, D225: what an operator's monitoring sees of the database during and after an outage. The service's database
// connections (its pool and the event bus's listening connection) run through a TCP proxy of the test's own, which is
// cut for a few seconds and then restored, as in test/ocpp/outage-log.test.ts. The lease is renewed every second
// (INSTANCE_LEASE_SECONDS=3), so the outage spans several renewals and several reconnects of the bus. PostgreSQL only
// (PGlite has no connection to cut, and no pool).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { throttledLog } from '../../src/lib/throttled-log.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { logCapture } from '../helpers/log-capture.ts';
import { proxiedDatabase } from '../helpers/db-proxy.ts';
import { eventually } from '../helpers/ocpp-factories.ts';

const { lines, logger, of, saying } = logCapture('info');

describe.skipIf(!process.env.DATABASE_URL)('D224: a database outage and its end, in the log and on /metrics', () => {
  let db: Awaited<ReturnType<typeof proxiedDatabase>>;
  let svc: TestService;

  beforeAll(async () => {
    db = await proxiedDatabase(4);
    svc = await createTestService({ listen: true, db: db.viaProxy, logger, env: { INSTANCE_LEASE_SECONDS: '3' } });
  });
  afterAll(async () => {
    await svc?.close();
    await db?.close();
  });

  const scrape = async () => {
    const res = await fetch(`${svc.url}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const value = (series: string) => {
      const m = new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
      return m ? Number(m[1]) : undefined;
    };
    return {
      up: value('db_up'),
      idle: value('db_pool_connections{state="idle"}'),
      inUse: value('db_pool_connections{state="in_use"}'),
      waiting: value('db_pool_waiting_requests'),
      max: value('db_pool_max_connections'),
    };
  };

  it('the lease and bus warnings are written once with a count of the rest; one db.recovered line and db_up say when it is back', { timeout: 60_000 }, async () => {
    // healthy: the database is up and the pool is described
    const before = await scrape();
    // (the scrape's own outbox query may be waiting for its connection as the gauges are read)
    expect(before).toMatchObject({ up: 1, waiting: expect.any(Number), max: 4 });
    expect(before.idle! + before.inUse!).toBeGreaterThanOrEqual(1);
    expect(before.idle! + before.inUse!).toBeLessThanOrEqual(4);

    const t0 = Date.now();
    db.proxy.cut();
    try {
      // the lease renewal fails: db_up says so at the next scrape
      await eventually(() => expect(of('ocpp.lease_renewal_failed')).toHaveLength(1), 10_000);
      expect((await scrape()).up).toBe(0);
      // several renewals (one a second) and several reconnects of the bus fail meanwhile
      await new Promise((r) => setTimeout(r, 4_000));
      expect(saying(/lease renewal failed/)).toHaveLength(1);
      expect(of('ocpp.lease_renewal_failed')[0]).toMatchObject({ level: 40, err: expect.objectContaining({ message: expect.any(String) }) });
      expect(saying(/^bus: could not reconnect/).length).toBeLessThanOrEqual(1);
      expect(saying(/^bus: the listening connection was lost/)).toHaveLength(1);
      expect(of('bus.connection_lost')).toHaveLength(1);
      expect(of('bus.reconnect_failed')).toHaveLength(1);
      expect(of('bus.reconnect_failed')[0]).toMatchObject({ level: 40, attempt: 1 });
      expect(of('db.recovered')).toEqual([]);
    } finally {
      db.proxy.restore();
    }

    // back: the next renewal succeeds and one line says how long it was out and how much was not logged
    await eventually(() => expect(of('db.recovered')).toHaveLength(1), 10_000);
    const sinceCut = Date.now() - t0;
    const recovered = of('db.recovered')[0]!;
    expect(recovered).toMatchObject({ level: 30, pid: process.pid });
    expect(recovered.failedProbes).toBeGreaterThanOrEqual(3);
    expect(recovered.downMs).toBeGreaterThanOrEqual(3_000);
    expect(recovered.downMs).toBeLessThanOrEqual(sinceCut);
    // at least the renewals after the first one were counted, not logged
    expect(recovered.suppressed).toBeGreaterThanOrEqual((recovered.failedProbes as number) - 1);
    expect(Number.isInteger(recovered.downMs) && Number.isInteger(recovered.suppressed)).toBe(true);
    expect((await scrape()).up).toBe(1);

    // the interval's end: the closing line counts the renewals that were not logged one by one
    throttledLog(logger).flush();
    const closing = of('ocpp.lease_renewal_failed').at(-1)!;
    expect(closing).toMatchObject({ level: 40, suppressed: (recovered.failedProbes as number) - 1 });
    expect(String(closing.msg)).toMatch(/not logged one by one/);

    // a renewal that succeeds with nothing to recover from writes nothing
    const n = lines.length;
    await new Promise((r) => setTimeout(r, 1_500));
    expect(lines.slice(n).filter((l) => l.event === 'db.recovered')).toEqual([]);
  });
});
