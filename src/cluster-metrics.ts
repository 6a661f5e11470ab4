// D216: the primary's side of GET /metrics with WORKERS above 1. It asks every live worker for its registry (the
// request prom-client's AggregatorRegistry answers in each worker) and sums them (D61), and it keeps the service's
// counters from going backwards: a worker that died takes its counters and histograms with it, and a worker that did
// not answer in time left them out of the sum, so a scraper saw every counter fall (a reset to Prometheus: rate() and
// increase() then counted the survivors' whole totals again and alerted on nothing). The last figures each worker
// gave stand in for a worker that does not answer, and those of a dead worker stay in the sum for good (counters and
// histograms only; its gauges go with it). What it had counted after its last scrape is lost, but a total never
// falls. The gathering's own state is exported beside: how many workers answered and how many were replaced.
import type { Worker } from 'node:cluster';
import { AggregatorRegistry, Counter, Gauge, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';

// prom-client's own messages between the primary and a worker's AggregatorRegistry (prom-client/lib/cluster.js)
const GET_METRICS_REQ = 'prom-client:getMetricsReq';
const GET_METRICS_RES = 'prom-client:getMetricsRes';
/**
 * How long the primary waits for a worker's registry (prom-client's own timeout is the same). D266: a worker's collects
 * that read the database wait 1.5 s at most (the outbox gauges, src/domain/invites/metrics.ts), so a database that does
 * not answer never makes a worker silent here: its `db_up`, `bus_up` and pool gauges are always in the sum.
 */
const WORKER_ANSWER_MS = 5_000;

type RegistryJson = MetricObjectWithValues<MetricValue<string>>[];

/** Only what never falls: counters and histograms (a dead or silent worker's gauges say nothing about now). */
const monotonic = (reg: RegistryJson): RegistryJson => reg.filter((m) => ['counter', 'histogram'].includes(String(m.type)));

export interface ClusterMetrics {
  /** the whole service's metrics text */
  gather(): Promise<string>;
  /** a worker exited: its last figures stay in the sum */
  retire(worker: Worker): Promise<void>;
  /** a worker was started again in place of one that exited */
  restarted(): void;
  /** a message from a worker (its answer to a request) */
  onMessage(worker: Worker, message: unknown): void;
}

/**
 * `liveWorkers`: the workers that listen (D237: a worker still starting has no registry to give yet, and waiting 5 s
 * for it at every scrape while it boots made the asking worker's own wait run out, so the scrape fell back to one
 * worker's figures); `starting`: how many were forked and do not listen yet.
 */
export function clusterMetrics(liveWorkers: () => Worker[], starting: () => number = () => 0): ClusterMetrics {
  const last = new Map<Worker, RegistryJson[]>();
  /** the counters and histograms of every worker that died, summed into one registry's figures */
  let retired: RegistryJson[] = [];
  let seq = 0;
  const waiting = new Map<number, { pending: Set<Worker>; got: Map<Worker, RegistryJson[]>; done: () => void }>();

  const own = new Registry();
  const workersGauge = new Gauge({
    name: 'cluster_workers',
    help: 'Workers of the cluster at the last gathering of /metrics: answered, silent (counted with its last figures) or starting (not listening yet)',
    labelNames: ['state'] as const,
    registers: [own],
  });
  const restarts = new Counter({ name: 'cluster_worker_restarts_total', help: 'Workers started again after one exited', registers: [own] });

  return {
    onMessage(worker, message) {
      const m = message as { type?: string; requestId?: number; metrics?: RegistryJson[]; error?: string } | null;
      if (m?.type !== GET_METRICS_RES || typeof m.requestId !== 'number') return;
      const r = waiting.get(m.requestId);
      if (!r || !r.pending.has(worker)) return;
      if (Array.isArray(m.metrics) && !m.error) r.got.set(worker, m.metrics);
      r.pending.delete(worker);
      if (r.pending.size === 0) r.done();
    },
    async gather() {
      const workers = liveWorkers().filter((w) => w.isConnected());
      const id = seq++;
      const got = new Map<Worker, RegistryJson[]>();
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, WORKER_ANSWER_MS);
        const pending = new Set(workers);
        waiting.set(id, { pending, got, done: () => (clearTimeout(timer), resolve()) });
        for (const w of workers) {
          try {
            w.send({ type: GET_METRICS_REQ, requestId: id });
          } catch {
            pending.delete(w);
          }
        }
        if (pending.size === 0) (clearTimeout(timer), resolve());
      });
      waiting.delete(id);
      const parts: RegistryJson[] = [];
      let silent = 0;
      for (const w of workers) {
        const answer = got.get(w);
        if (answer) {
          last.set(w, answer);
          parts.push(...answer);
        } else {
          silent++;
          parts.push(...(last.get(w) ?? []).map(monotonic));
        }
      }
      workersGauge.set({ state: 'answered' }, workers.length - silent);
      workersGauge.set({ state: 'silent' }, silent);
      workersGauge.set({ state: 'starting' }, starting());
      parts.push(...retired, await own.getMetricsAsJSON());
      return AggregatorRegistry.aggregate(parts).metrics();
    },
    async retire(worker) {
      const figures = last.get(worker);
      last.delete(worker);
      if (!figures) return;
      retired = [await AggregatorRegistry.aggregate([...retired, ...figures.map(monotonic)]).getMetricsAsJSON()];
    },
    restarted() {
      restarts.inc();
    },
  };
}
