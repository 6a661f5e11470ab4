// D264: the event bus's listening connection behind a network that fails silently. It only receives, so a dead one
// said nothing: no log, no reconnect, bus_up 1, events gone (owners' live views on the 15 s re-read, commands on the
// poll). Its own round trip every checkIntervalMs (short here) notices: bus.connection_dead, closed and reopened,
// bus_up 0 while down and 1 after, and events arrive again.
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBus, type Bus } from '../../src/db/bus.ts';
import { watchBusDelivery } from '../../src/db/bus-delivery.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { dbProxy } from '../helpers/db-proxy.ts';
import { logCapture } from '../helpers/log-capture.ts';

const busUp = async (metrics: Registry) => (await metrics.getSingleMetric('bus_up')!.get()).values[0]?.value;

async function until(what: string, cond: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!process.env.DATABASE_URL)('D264: the event bus notices a dead listening connection', () => {
  let direct: TestDb;
  let proxy: Awaited<ReturnType<typeof dbProxy>>;
  let bus: Bus;
  const log = logCapture('debug');
  const metrics = new Registry();
  const got: unknown[] = [];

  beforeAll(async () => {
    direct = await createTestDb();
    proxy = await dbProxy(direct.url!);
    bus = createBus({ ...direct, url: proxy.url }, log.logger, { checkIntervalMs: 200, checkTimeoutMs: 300 });
    bus.subscribe('netcheck', (p) => got.push(p.n));
    expect(await watchBusDelivery({ bus, db: direct.db, metrics, logger: log.logger }, 2_000)).toBe(true);
  });
  afterAll(async () => {
    proxy?.heal();
    await bus?.close();
    await proxy?.close();
    await direct?.close();
  });

  const delivered = async (n: number) => {
    await bus.publish(direct.db, 'netcheck', { n });
    await until(`event ${n} delivered`, () => got.includes(n), 3_000);
  };

  it("the server's side closed, ours left open and silent: found dead, reopened, bus_up 0 then 1, events again", { timeout: 30_000 }, async () => {
    await delivered(1);
    expect(await busUp(metrics)).toBe(1);
    proxy.deadServer();
    await until('bus_up 0', async () => (await busUp(metrics)) === 0);
    expect(log.of('bus.connection_dead').length).toBeGreaterThan(0);
    await until('bus_up 1 again', async () => (await busUp(metrics)) === 1);
    await delivered(2);
  });

  it('a blackhole: bus_up 0 while it lasts, 1 once the network is back, events again', { timeout: 30_000 }, async () => {
    await delivered(3);
    proxy.blackhole();
    await until('bus_up 0', async () => (await busUp(metrics)) === 0);
    // still down a while later: the reconnect attempts meet the same network
    await new Promise((r) => setTimeout(r, 500));
    expect(await busUp(metrics)).toBe(0);
    proxy.heal();
    await until('bus_up 1 again', async () => (await busUp(metrics)) === 1, 20_000);
    await delivered(4);
  });
});

describe.skipIf(!process.env.DATABASE_URL)('D270: a delivery check that could not publish is tried again', () => {
  it('the listening connection is fine but the pool cannot reach the database: bus_up becomes 1 once it can', { timeout: 30_000 }, async () => {
    const direct = await createTestDb();
    const proxy = await dbProxy(direct.url!);
    const { createDb } = await import('../../src/db/database.ts');
    const pool = await createDb({ DATABASE_URL: proxy.url, poolSize: 2, connectTimeoutMs: 500 });
    const log = logCapture('debug');
    const metrics = new Registry();
    const bus = createBus(direct, log.logger);
    try {
      // the publishing pool is cut off: the check cannot publish, which says nothing about the bus
      proxy.cut();
      expect(await watchBusDelivery({ bus, db: pool.db, metrics, logger: log.logger }, 2_000, 200)).toBeNull();
      expect(log.of('bus.no_delivery')).toEqual([]);
      // the database comes back for the pool: the check is tried again and bus_up says 1 (it stayed unset before)
      proxy.restore();
      await until('bus_up 1', async () => (await busUp(metrics)) === 1, 10_000);
    } finally {
      await bus.close();
      await pool.close();
      await proxy.close();
      await direct.close();
    }
  });
});
