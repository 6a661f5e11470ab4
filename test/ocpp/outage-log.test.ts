// D222: a database outage is logged once a minute per process and event, with a count of the rest. The service's
// database connection runs through a TCP proxy of the test's own, which is cut; a charger then sends four readings,
// each refused with CALLERROR InternalError (C4.11). Before, every message wrote an error line and each retry of its
// transaction a warn line with the stack; now the first of each event is logged, and the end of the interval says
// how many were not. D232: the same for the lines of chargers and owners who keep talking through the outage (the
// last_seen_at write, an owner's live stream). PostgreSQL only (PGlite has no connection to cut), as test/ocpp/db-fault.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { throttledLog } from '../../src/lib/throttled-log.ts';
import { startScheduler } from '../../src/jobs/scheduler.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { logCapture } from '../helpers/log-capture.ts';
import { proxiedDatabase } from '../helpers/db-proxy.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline } from '../helpers/ocpp-factories.ts';

const { lines, logger, of } = logCapture('warn');

describe.skipIf(!process.env.DATABASE_URL)('D222: a database outage in the log', () => {
  let db: Awaited<ReturnType<typeof proxiedDatabase>>;
  let svc: TestService;

  beforeAll(async () => {
    db = await proxiedDatabase(5);
    svc = await createTestService({ listen: true, db: db.viaProxy, logger });
  });
  afterAll(async () => {
    await svc?.close();
    await db?.close();
  });

  it('four refused messages: one line per event at once, then one line with the count of the rest', { timeout: 60_000 }, async () => {
    const { at } = hourAgoTimeline();
    const user = await aUser(svc.deps);
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: at(0) })) as { transactionId: number };
      throttledLog(logger).flush(); // a fresh interval
      lines.length = 0;
      db.proxy.cut();
      for (let i = 1; i <= 4; i++) {
        const err = await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(i), 100 * i)] }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toMatchObject({ rpcErrorCode: 'InternalError' });
      }
      expect(of('db.unavailable_refused')).toHaveLength(1);
      expect(of('db.unavailable_refused')[0]).toMatchObject({ level: 50, chargerId: ch.chargerId, method: 'MeterValues' });
      expect(of('db.transient_retry').length).toBeLessThanOrEqual(1);
      // the interval ends: how many were not logged one by one
      throttledLog(logger).flush();
      expect(of('db.unavailable_refused').at(-1)).toMatchObject({ level: 50, suppressed: 3 });
    } finally {
      db.proxy.restore();
      await cli.close().catch(() => undefined);
    }
  });

  it('D223: node-cron skipping its ticks while the database is away says so in one JSON line, not a text dump', { timeout: 30_000 }, async () => {
    throttledLog(logger).flush();
    lines.length = 0;
    const scheduler = startScheduler(svc.deps, [{ name: 'outage-probe', cron: () => '* * * * * *', run: async () => null }]);
    try {
      db.proxy.cut();
      const t0 = Date.now();
      while (of('cron.error').length === 0 && Date.now() - t0 < 20_000) await new Promise((r) => setTimeout(r, 200));
      expect(of('cron.error')[0]).toMatchObject({ level: 40 });
      expect(String(of('cron.error')[0]!.msg)).toMatch(/^node-cron: Run coordinator failed; skipping execution/);
      expect(of('cron.error')[0]!.msg).not.toMatch(/\n\s+at /);
    } finally {
      db.proxy.restore();
      await scheduler.stop();
    }
  });

  it('D232: a charger talking through an outage: its last_seen_at writes fail once a line a minute, not every 250 ms', { timeout: 60_000 }, async () => {
    const user = await aUser(svc.deps);
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      throttledLog(logger).flush();
      lines.length = 0;
      db.proxy.cut();
      // each message after a failed write notes the socket again, and each 250 ms flush of the notes fails
      for (let i = 0; i < 6; i++) {
        await cli.call('Heartbeat', {}).catch(() => undefined);
        const t0 = Date.now();
        // the write failed: logged, or counted by the throttle
        const failed = () => lines.filter((l) => /last_seen_at/.test(String(l.msg))).length + throttledLog(logger).suppressedTotal;
        const before = failed();
        while (failed() === before && Date.now() - t0 < 5_000) await new Promise((r) => setTimeout(r, 50));
      }
      const seen = lines.filter((l) => /last_seen_at/.test(String(l.msg)));
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ level: 40, event: 'ocpp.seen_write_failed', chargers: 1 });
      throttledLog(logger).flush();
      // the rest counted (a heartbeat may share a flush with the one before: at least 3 of the 5 others)
      expect(Number(of('ocpp.seen_write_failed').at(-1)!.suppressed)).toBeGreaterThanOrEqual(3);
    } finally {
      db.proxy.restore();
      await cli.close().catch(() => undefined);
    }
  });

  it('D232: an owner\'s live stream through an outage: its retried reads fail once a line a minute, not every second', { timeout: 60_000 }, async () => {
    // a second process on the same (cut) database whose streams are refreshed every second
    const api = await createTestService({ listen: true, db: db.viaProxy, logger, env: { STREAM_KEEPALIVE_SECONDS: '1' } });
    const abort = new AbortController();
    try {
      const user = await aUser(api.deps);
      await anOcppCharger(api, user);
      const res = await fetch(`${api.url}/chargers/stream`, { headers: { accept: 'text/event-stream', authorization: `Bearer ${user.token}` }, signal: abort.signal });
      expect(res.status).toBe(200);
      void res.body!.pipeTo(new WritableStream()).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 500));
      throttledLog(logger).flush();
      lines.length = 0;
      db.proxy.cut();
      const failed = () => lines.filter((l) => /charger stream: read failed/.test(String(l.msg)));
      // the stream reads again each second (and backs off a second after a failure): five seconds of outage
      await new Promise((r) => setTimeout(r, 5_000));
      expect(failed()).toHaveLength(1);
      expect(failed()[0]).toMatchObject({ level: 40, event: 'stream.read_failed', userId: user.userId });
      throttledLog(logger).flush();
      expect(Number(of('stream.read_failed').at(-1)!.suppressed)).toBeGreaterThanOrEqual(2);
    } finally {
      db.proxy.restore();
      abort.abort();
      await api.close();
    }
  });
});
