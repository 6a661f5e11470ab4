// D224: whether this process reaches its database, as an operator's monitoring sees it. The probe is the instance
// lease's renewal (ocpp/instance-lease.ts), a write every third of INSTANCE_LEASE_SECONDS that runs anyway, on
// PostgreSQL and on PGlite: a failed renewal sets `db_up` to 0, and the first renewal that succeeds after one or more
// failures sets it back to 1 and writes one `db.recovered` line (info) saying how long the database was seen down and
// how many outage lines the throttle (lib/throttled-log.ts, D222) kept out of the log meanwhile. Nothing is added to
// the path of a message: the renewal was there before, and a healthy renewal costs one assignment here. An outage
// shorter than one renewal interval may pass without either; its throttled lines still show it.
// D225: the node-postgres pool's own counts (connections idle and in use, requests waiting for one, its size), read
// at each scrape from the pool's fields, no query. PGlite has no pool (one in-process session whose queue the
// dialect keeps): its process exports `db_up` only.
// With WORKERS above 1 the primary aggregates the workers' registries (D216): `db_up` takes the smallest (one worker
// that cannot reach the database makes it 0), the pool gauges the sum (the service's connections to PostgreSQL).
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import { throttledLog } from '../lib/throttled-log.ts';
import { poolStats, type Db } from './database.ts';

export interface DbHealth {
  /** a probe that began at `startedAt` (ms since the epoch) failed */
  down(startedAt: number): void;
  /** a probe succeeded; the first one after failures writes `db.recovered` */
  up(): void;
}

interface Outage {
  /** when the first failed probe began */
  since: number;
  failedProbes: number;
  /** the throttle's count of lines not logged at the last probe that succeeded before the outage */
  suppressedBefore: number;
}

const perRegistry = new WeakMap<Registry, DbHealth>();

/** The database's health on this service's registry (one per registry: one per service instance), with its metrics. */
export function dbHealth(target: { metrics: Registry; logger: Logger; db: Db }): DbHealth {
  const existing = perRegistry.get(target.metrics);
  if (existing) return existing;
  const { metrics, logger, db } = target;
  const upGauge = new Gauge({
    name: 'db_up',
    help: 'Whether the database answered the last probe of this process (the instance lease renewal): 1 or 0; with WORKERS above 1, 0 when any worker cannot reach it',
    aggregator: 'min',
    registers: [metrics],
  });
  upGauge.set(1);
  if (poolStats(db)) poolGauges(metrics, db);

  const throttle = throttledLog(logger);
  let outage: Outage | undefined;
  let suppressedAtUp = throttle.suppressedTotal;
  const health: DbHealth = {
    down(startedAt) {
      upGauge.set(0);
      if (outage) outage.failedProbes++;
      else outage = { since: startedAt, failedProbes: 1, suppressedBefore: suppressedAtUp };
    },
    up() {
      suppressedAtUp = throttle.suppressedTotal;
      if (!outage) return;
      const { since, failedProbes, suppressedBefore } = outage;
      outage = undefined;
      upGauge.set(1);
      const downMs = Math.max(0, Math.round(Date.now() - since));
      const suppressed = suppressedAtUp - suppressedBefore;
      logger.info(
        { event: 'db.recovered', downMs, failedProbes, suppressed },
        `the database answers again, after ${Math.round(downMs / 1000)} s seen down (${failedProbes} failed lease renewals; ${suppressed} outage lines not logged one by one)`,
      );
    },
  };
  perRegistry.set(metrics, health);
  return health;
}

/** D225: the pool's counts at each scrape (prom-client calls collect() then; no timer). */
function poolGauges(metrics: Registry, db: Db): void {
  new Gauge({
    name: 'db_pool_connections',
    help: "Connections of the database pool, by state: idle or in_use (the event bus's listening connection is one more per process)",
    labelNames: ['state'] as const,
    aggregator: 'sum',
    registers: [metrics],
    collect() {
      const s = poolStats(db);
      if (!s) return;
      this.set({ state: 'idle' }, s.idle);
      this.set({ state: 'in_use' }, s.total - s.idle);
    },
  });
  new Gauge({
    name: 'db_pool_waiting_requests',
    help: 'Requests waiting for a connection of the database pool (every connection in use and the pool at its size)',
    aggregator: 'sum',
    registers: [metrics],
    collect() {
      const s = poolStats(db);
      if (s) this.set(s.waiting);
    },
  });
  new Gauge({
    name: 'db_pool_max_connections',
    help: 'The size of the database pool (the most connections it opens)',
    aggregator: 'sum',
    registers: [metrics],
    collect() {
      const s = poolStats(db);
      if (s) this.set(s.max);
    },
  });
}
