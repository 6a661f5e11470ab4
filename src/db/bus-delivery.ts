// D245, D264, D270: whether events come back through the event bus (bus.ts). A serving process publishes one event
// to itself through the pool at start, and again after the listening connection came back; `bus_up` on /metrics says
// whether it arrived (0 from the moment the connection is lost), and one error line when it did not (a pooler in
// transaction mode?). A check that could not publish (the database away) says nothing about the bus and is tried again.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { Bus } from './bus.ts';
import type { Db } from './database.ts';

/** D245: how long the start's round trip waits for its own event (a delivered one takes milliseconds) */
export const DELIVERY_CHECK_MS = 5_000;
const CHECK_TOPIC = 'bus_check';

const busUpGauges = new WeakMap<Registry, Gauge>();
function busUpGauge(metrics: Registry): Gauge {
  let gauge = busUpGauges.get(metrics);
  if (!gauge) {
    gauge = new Gauge({
      name: 'bus_up',
      help: 'Whether an event this process published came back to it through the event bus (LISTEN/NOTIFY) at the last check (at start and after the listening connection came back): 1 or 0; 0 behind a transaction-mode pooler, events then wait for the poll fallbacks; with WORKERS above 1, 0 when any worker\'s did not',
      aggregator: 'min',
      registers: [metrics],
    });
    busUpGauges.set(metrics, gauge);
  }
  return gauge;
}

export interface BusCheckTarget {
  bus: Bus;
  /** what publishers publish through (the pool) */
  db: Db;
  metrics: Registry;
  logger: Logger;
}

/**
 * D245: one event to this process itself, published through `db` as every publisher does, after the bus listens on
 * its channel. true: it came back within `timeoutMs`; false: it did not (one error line, `bus_up` 0); null: it could
 * not be published (the database is away: that says nothing about the bus, and is logged by whoever meets it).
 */
export async function checkBusDelivery(target: BusCheckTarget, timeoutMs = DELIVERY_CHECK_MS): Promise<boolean | null> {
  const { bus, db, metrics, logger } = target;
  const gauge = busUpGauge(metrics);
  const nonce = randomUUID();
  let arrived = () => {};
  const back = new Promise<boolean>((resolve) => (arrived = () => resolve(true)));
  const off = bus.subscribe(CHECK_TOPIC, (payload) => {
    if (payload.nonce === nonce) arrived();
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await bus.listening(CHECK_TOPIC);
    try {
      await bus.publish(db, CHECK_TOPIC, { nonce });
    } catch (err) {
      logger.debug({ err }, 'bus: the delivery check could not publish');
      return null;
    }
    const ok = await Promise.race([back, new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))]);
    gauge.set(ok ? 1 : 0);
    if (!ok) {
      logger.error(
        { event: 'bus.no_delivery', waitedMs: timeoutMs },
        `bus: an event this process published did not come back within ${timeoutMs / 1000} s: the event bus (LISTEN/NOTIFY) receives nothing, so commands to chargers held by other processes and owners' live views wait for the slow polls (1–2 s). A pooler in transaction mode (PgBouncer pool_mode = transaction) between the service and PostgreSQL? It also leaks the jobs' advisory locks: use session mode for the service's database, or point DATABASE_URL at PostgreSQL directly`,
      );
    }
    return ok;
  } finally {
    if (timer) clearTimeout(timer);
    off();
  }
}

/**
 * D245: checkBusDelivery now, and again after each time the listening connection came back (bus_up follows).
 * D264: bus_up is 0 from the moment the listening connection is lost or found dead until that check after its return.
 */
export function watchBusDelivery(target: BusCheckTarget, timeoutMs = DELIVERY_CHECK_MS, retryMs = DELIVERY_RETRY_MS): Promise<boolean | null> {
  // D270: a check that could not publish (the pool still dead when the listening connection came back, or the
  // database away at start) is tried again every retryMs, up to DELIVERY_RETRIES times, so bus_up does not stay 0
  // after the database is back (the next loss and return of the bus starts it again)
  let retry: NodeJS.Timeout | null = null;
  const check = (left = DELIVERY_RETRIES): Promise<boolean | null> => {
    if (retry) clearTimeout(retry);
    retry = null;
    return checkBusDelivery(target, timeoutMs).then((r) => {
      if (r === null && left > 0) retry = setTimeout(() => void check(left - 1).catch(() => undefined), retryMs).unref();
      return r;
    });
  };
  target.bus.onLost(() => busUpGauge(target.metrics).set(0));
  target.bus.onResync(() => void check().catch(() => undefined));
  return check();
}

/** D270: how long after a delivery check that could not publish it is tried again, and how many times (10 minutes) */
const DELIVERY_RETRY_MS = 10_000;
const DELIVERY_RETRIES = 60;
