// D266: /metrics while the database does not answer at all (a blackhole: packets dropped, connections left open, no
// error and no reset). An outside audit put a proxy holding every packet between the gateway and PostgreSQL: with
// WORKERS=2 every scrape of a 3-minute outage lacked `db_up` and `bus_up` (and every gauge of the workers), because each
// worker's collect awaited the outbox gauges' statement, which hung on the dead network, and the primary dropped the
// gauges of a worker silent for 5 s (src/cluster-metrics.ts); an alert on `db_up == 0` never fired. With WORKERS=1 the
// scrape itself waited for that statement. The collect now waits 1.5 s at most and keeps the queue's last figures, so
// db_up, bus_up and the pool gauges are always exported. Real processes (src/main.ts) whose connections run through a
// small proxy of this file's own that holds what either side sends while the blackhole is on. PostgreSQL only.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/database.ts';
import { TEST_OPERATOR } from '../helpers/app.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { eventually } from '../helpers/ocpp-factories.ts';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';

/**
 * A TCP proxy to PostgreSQL with a blackhole: while on, nothing is passed either way (both sides are paused, so what
 * they send waits in the kernel's buffers as on a network that drops it) and a new connection is accepted but never
 * forwarded. The sockets stay open: no error, no reset, as the audit's.
 */
async function blackholeProxy(url: string) {
  const u = new URL(url);
  const sockets = new Set<net.Socket>();
  const held: Array<() => void> = [];
  let blackhole = false;
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => {});
    const forward = () => {
      const up = net.connect({ host: u.hostname || '127.0.0.1', port: Number(u.port || 5432) });
      sockets.add(up);
      up.on('close', () => (sockets.delete(up), client.destroy()));
      up.on('error', () => {});
      client.on('close', () => up.destroy());
      client.pipe(up);
      up.pipe(client);
    };
    if (blackhole) {
      client.pause();
      held.push(forward);
    } else forward();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as net.AddressInfo).port);
  return {
    url: proxied.toString(),
    hold(on: boolean) {
      blackhole = on;
      if (!on) for (const f of held.splice(0)) f();
      for (const s of sockets) {
        if (on) s.pause();
        else s.resume();
      }
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The value of one series in a metrics text, undefined when the series is absent. */
function sample(text: string, series: string): number | undefined {
  const m = new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

describe.skipIf(!process.env.DATABASE_URL)('D266: /metrics while the database does not answer', () => {
  let direct: TestDb;
  let proxy: Awaited<ReturnType<typeof blackholeProxy>>;
  const dataDirs: string[] = [];
  const dataKey = crypto.randomBytes(32).toString('base64'); // one database, one key

  beforeAll(async () => {
    direct = await createTestDb();
    proxy = await blackholeProxy(direct.url!);
  });
  afterAll(async () => {
    await proxy?.close();
    await direct?.close();
    for (const d of dataDirs) fs.rmSync(d, { recursive: true, force: true });
  });

  const start = (workers: string): Promise<ServiceProcess> => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-metrics-blackhole-'));
    dataDirs.push(dataDir);
    return startServiceProcess({
      ...TEST_OPERATOR,
      DATABASE_URL: proxy.url,
      WORKERS: workers,
      APP_ENV: 'production',
      METRICS_TOKEN: 'metrics-token-0123456789',
      DATA_ENCRYPTION_KEY: dataKey,
      DATA_DIR: dataDir,
      JOBS_ENABLED: 'false',
      LOG_LEVEL: 'warn',
    });
  };
  /** A scrape that must be answered while the database is away (8 s: the old code's waited without end or 10 s). */
  const scrape = async (svc: ServiceProcess) => {
    const res = await fetch(`${svc.url}/metrics`, {
      headers: { authorization: 'Bearer metrics-token-0123456789', connection: 'close' },
      signal: AbortSignal.timeout(8_000),
    });
    expect(res.status).toBe(200);
    return res.text();
  };
  const gaugesOf = (text: string) => ({
    db_up: sample(text, 'db_up'),
    bus_up: sample(text, 'bus_up'),
    pool_max: sample(text, 'db_pool_max_connections'),
    pool_idle: sample(text, 'db_pool_connections{state="idle"}'),
  });

  it('WORKERS=2: every scrape during the outage has db_up, bus_up and the pool gauges, and both workers answered', { timeout: 120_000 }, async () => {
    const svc = await start('2');
    try {
      const h = await createDb({ DATABASE_URL: direct.url!, poolSize: 1 });
      try {
        await eventually(async () => expect(new Set((await h.db.selectFrom('ocpp_instances').select('pid').execute()).map((l) => l.pid)).size).toBe(2), 60_000);
      } finally {
        await h.close();
      }
      // healthy: both workers' gauges are there (the bus checked its delivery at start)
      await eventually(async () => {
        const text = await scrape(svc);
        expect(sample(text, 'cluster_workers{state="answered"}')).toBe(2);
        expect(gaugesOf(text)).toEqual({ db_up: 1, bus_up: 1, pool_max: 20, pool_idle: expect.any(Number) });
      }, 30_000);
      proxy.hold(true);
      try {
        for (let i = 0; i < 3; i++) {
          const text = await scrape(svc);
          expect(sample(text, 'cluster_workers{state="answered"}')).toBe(2);
          expect(sample(text, 'cluster_workers{state="silent"}')).toBe(0);
          // db_up may still be 1 (no lease renewal has failed yet) or 0: what matters is that it is there
          expect(gaugesOf(text)).toEqual({ db_up: expect.any(Number), bus_up: expect.any(Number), pool_max: 20, pool_idle: expect.any(Number) });
          // the queue's figures stay (the last ones read), not an absent series
          expect(sample(text, 'outbox_queued_messages')).toBe(0);
        }
      } finally {
        proxy.hold(false);
      }
    } finally {
      await svc.kill();
    }
  });

  it('WORKERS=1: the scrape answers during the outage, with db_up, bus_up and the pool gauges', { timeout: 120_000 }, async () => {
    const svc = await start('1');
    try {
      await eventually(async () => expect(gaugesOf(await scrape(svc))).toEqual({ db_up: 1, bus_up: 1, pool_max: 10, pool_idle: expect.any(Number) }), 30_000);
      proxy.hold(true);
      try {
        for (let i = 0; i < 3; i++) {
          expect(gaugesOf(await scrape(svc))).toEqual({ db_up: expect.any(Number), bus_up: expect.any(Number), pool_max: 10, pool_idle: expect.any(Number) });
        }
      } finally {
        proxy.hold(false);
      }
    } finally {
      await svc.kill();
    }
  });
});
