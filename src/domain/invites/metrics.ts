// D217: whether mail goes out, as metrics an operator can alert on. With the SMTP server unreachable the outbox-deliver
// job still ends `ok` every minute (a failed send is the message's outcome, not the job's), so job_runs_total said
// nothing; these say it:
//  - outbox_deliveries_total{result}: what the delivery decided for each message it took (sent; retry: a temporary
//    failure, tried again later; failed: given up, by a bounce, another permanent refusal, two days of retries, an
//    expired sign-in link or a send interrupted by a restart; suppressed: the address is on the suppression list).
//  - outbox_queued_messages and outbox_oldest_queued_seconds: what waits, due or not, read from the database at each
//    scrape, so a queue nobody works off (no SMTP_URL, a scheduler that stopped) shows although nothing is attempted.
// With WORKERS above 1 every worker reads the same table and the primary aggregates (D61, D216): the gauges take the
// largest worker's figure (`aggregator: 'max'`) instead of the sum, which would count the queue once per worker.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Deps } from '../../deps.ts';
import { throttledLog } from '../../lib/throttled-log.ts';

export const DELIVERY_RESULTS = ['sent', 'retry', 'failed', 'suppressed'] as const;
export type DeliveryResult = (typeof DELIVERY_RESULTS)[number];

const DELIVERIES = 'outbox_deliveries_total';
const QUEUED = 'outbox_queued_messages';
const OLDEST = 'outbox_oldest_queued_seconds';

/** The counter of delivery decisions on this registry, created with every result at 0 (a series to alert on from the start). */
export function outboxDeliveries(deps: Pick<Deps, 'metrics'>): Counter<'result'> {
  const existing = deps.metrics.getSingleMetric(DELIVERIES);
  if (existing) return existing as Counter<'result'>;
  const counter = new Counter({
    name: DELIVERIES,
    help: 'E-mail messages the outbox delivery decided on, by result: sent, retry (temporary failure, tried again), failed (given up), suppressed',
    labelNames: ['result'] as const,
    registers: [deps.metrics],
  });
  for (const result of DELIVERY_RESULTS) counter.inc({ result }, 0);
  return counter;
}

interface QueueState {
  queued: number;
  oldestSeconds: number;
}

/**
 * D266: how long a scrape waits for the queue's statement (0.15 ms on a healthy database). With WORKERS above 1 the
 * primary waits 5 s for each worker's registry (src/cluster-metrics.ts) and drops the gauges of one that does not
 * answer: a statement hanging on a dead network (no answer, no error) held the worker's whole registry, and `db_up`,
 * `bus_up` and the pool gauges went missing from /metrics for the whole outage. Past this wait the gauges keep their
 * last figures and the scrape goes on.
 */
export const QUEUE_READ_WAIT_MS = 1_500;

interface QueueReader {
  /** the statement in flight, shared by the collects of every scrape until it settles (one at a time per process) */
  pending?: Promise<void>;
  /** the figures of the last statement that answered */
  last?: QueueState;
}

const readers = new WeakMap<Registry, QueueReader>();

/**
 * One statement for both gauges, shared by the two collects of one scrape (prom-client collects every metric at once).
 * `status = 'queued'` with `created_at` is what the index outbox_messages_status (status, created_at desc) holds, so
 * the count and the oldest are read from the index alone, however large the table of sent messages grows.
 * D266: waited for QUEUE_READ_WAIT_MS at most; a statement still running then is left to finish (its figures serve the
 * next scrape) and no second one is started beside it. Failures and waits are logged once a minute (D222's throttle).
 */
async function queueState(deps: Deps): Promise<QueueState | undefined> {
  let reader = readers.get(deps.metrics);
  if (!reader) readers.set(deps.metrics, (reader = {}));
  const r = reader;
  if (!r.pending) {
    r.pending = (async () => {
      const row = await deps.db
        .selectFrom('outbox_messages')
        .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.min('created_at').as('oldest')])
        .where('status', '=', 'queued')
        .executeTakeFirstOrThrow();
      const oldest = row.oldest ? new Date(row.oldest as Date).getTime() : null;
      r.last = { queued: Number(row.n), oldestSeconds: oldest === null ? 0 : Math.max(0, (deps.clock().getTime() - oldest) / 1000) };
    })()
      .catch((err: unknown) => {
        throttledLog(deps.logger).event('warn', 'outbox.metrics_failed', { err: (err as Error).message }, 'the outbox queue could not be read for /metrics');
      })
      .finally(() => (r.pending = undefined));
  }
  let timer: NodeJS.Timeout | undefined;
  const answered = await Promise.race([
    r.pending.then(() => true),
    new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), QUEUE_READ_WAIT_MS))),
  ]);
  clearTimeout(timer);
  if (!answered) {
    throttledLog(deps.logger).event(
      'warn',
      'outbox.metrics_failed',
      { err: `no answer within ${QUEUE_READ_WAIT_MS} ms` },
      'the outbox queue could not be read for /metrics',
    );
  }
  return r.last;
}

/**
 * A gauge set from the queue at each scrape. A database that does not answer (an error, or no answer within
 * QUEUE_READ_WAIT_MS) leaves the last figures (a 0 would say the queue is empty) and one warning a minute; the scrape
 * itself still answers with everything else.
 */
function queueGauge(deps: Deps, name: string, help: string, pick: (s: QueueState) => number): void {
  if (deps.metrics.getSingleMetric(name)) return;
  new Gauge({
    name,
    help,
    aggregator: 'max',
    registers: [deps.metrics],
    async collect() {
      const state = await queueState(deps);
      if (state) this.set(pick(state));
    },
  });
}

/** Registers the outbox's metrics on deps.metrics (once per registry): the delivery counter and the queue gauges. */
export function outboxMetrics(deps: Deps): void {
  outboxDeliveries(deps);
  queueGauge(deps, QUEUED, 'E-mail messages queued in the outbox, due or waiting for a retry (read from the database at each scrape)', (s) => s.queued);
  queueGauge(
    deps,
    OLDEST,
    'Age in seconds of the oldest queued e-mail message, from when it was first queued (0 when none is queued)',
    (s) => s.oldestSeconds,
  );
}
