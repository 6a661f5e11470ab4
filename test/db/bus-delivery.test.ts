// D245: behind a transaction-mode pooler the event bus receives nothing and nothing said so. A serving process sends
// one event to itself through the pool at start: one that does not come back is one error line and `bus_up` 0 (the
// service still starts; the polls are the fallback); one that does is `bus_up` 1 and no line. The dead bus here
// publishes through another database, whose NOTIFY never reaches this bus's listener (as a pooler's LISTEN on a
// server session handed to other clients).
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBus, type Bus } from '../../src/db/bus.ts';
import { checkBusDelivery } from '../../src/db/bus-delivery.ts';
import { createTestService } from '../helpers/app.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { logCapture } from '../helpers/log-capture.ts';

let here: TestDb;
let elsewhere: TestDb;
let bus: Bus;
const log = logCapture('debug');

beforeAll(async () => {
  here = await createTestDb();
  elsewhere = await createTestDb();
  bus = createBus(here, log.logger);
});
afterAll(async () => {
  await bus?.close();
  await here?.close();
  await elsewhere?.close();
});

const busUp = async (metrics: Registry) => (await metrics.getSingleMetric('bus_up')!.get()).values[0]?.value;

describe('D245: the event bus checks that its own event comes back', () => {
  it('a bus that delivers: true, bus_up 1, no error line', async () => {
    log.lines.length = 0;
    const metrics = new Registry();
    expect(await checkBusDelivery({ bus, db: here.db, metrics, logger: log.logger }, 5_000)).toBe(true);
    expect(await busUp(metrics)).toBe(1);
    expect(log.of('bus.no_delivery')).toEqual([]);
  });

  it('a bus whose NOTIFY never arrives: false, one error line saying what to do, bus_up 0', async () => {
    log.lines.length = 0;
    const metrics = new Registry();
    expect(await checkBusDelivery({ bus, db: elsewhere.db, metrics, logger: log.logger }, 300)).toBe(false);
    expect(await busUp(metrics)).toBe(0);
    const lines = log.of('bus.no_delivery');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50 });
    expect(String(lines[0]!.msg)).toMatch(/receives nothing.*transaction mode.*session mode.*PostgreSQL directly/);
    // the bus itself still works for what comes through its own database
    expect(await checkBusDelivery({ bus, db: here.db, metrics, logger: log.logger }, 5_000)).toBe(true);
    expect(await busUp(metrics)).toBe(1);
  });

  it('a serving service checks it at start: bus_up 1 on /metrics', { timeout: 60_000 }, async () => {
    const svc = await createTestService({ listen: true });
    try {
      const res = await svc.app.inject({ method: 'GET', url: '/metrics' });
      expect(res.body).toMatch(/^bus_up 1$/m);
    } finally {
      await svc.close();
    }
  });
});
