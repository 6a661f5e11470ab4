// WORKERS=N: N processes share the listening port (node:cluster). The primary only forks, watches and stops
// workers; each worker runs the whole service (HTTP, OCPP sockets, jobs) on the shared PostgreSQL, so nothing
// but its open sockets is its own: leases, limits, jobs (advisory locks) and commands (the event bus) already
// work across processes. A worker that dies is started again, with a growing delay if it keeps dying.
import cluster, { type Worker } from 'node:cluster';
import os from 'node:os';
import type { Logger } from 'pino';
import { AggregatorRegistry, type Registry } from 'prom-client';
import { clusterMetrics } from './cluster-metrics.ts';

// GET /metrics in cluster mode: the worker that serves the scrape asks the primary, which gathers every worker's
// registry over IPC (cluster-metrics.ts, with prom-client's aggregation: counters and histograms summed, event-loop
// lag averaged or its max taken, a dead or silent worker's last counters kept) and answers with the whole service's
// text.
const METRICS_REQ = 'ere:metrics-req';
const METRICS_RES = 'ere:metrics-res';

/** The number of processes WORKERS asks for: a number, or `auto` = one per core. */
export function workerCount(setting: string): number {
  return setting === 'auto' ? Math.max(1, os.availableParallelism()) : Number(setting);
}

/** A worker that lived this long before dying is restarted at once; quicker deaths back off up to 30 s. */
const HEALTHY_MS = 30_000;
/** How long a clean stop waits for the workers before it kills them. */
const STOP_GRACE_MS = 35_000;
/**
 * D152: this many workers in a row that died before they listened mean a configuration no worker can start with
 * (the database missing, the port taken): the primary stops with 1, so the supervisor sees the failure.
 */
export const MAX_START_FAILURES = 5;

export function runPrimary(n: number, logger: Logger): void {
  let stopping = false;
  let failures = 0;
  let startFailures = 0; // workers in a row that died before they listened
  const started = new Map<Worker, number>();
  const listening = new Set<Worker>();
  const fork = () => {
    if (stopping) return;
    const w = cluster.fork();
    started.set(w, Date.now());
  };
  cluster.on('listening', (w) => {
    listening.add(w);
    startFailures = 0;
  });
  // D237: a worker is asked for its figures once it listens; until then it counts as starting
  const metrics = clusterMetrics(() => [...listening], () => started.size - listening.size);
  cluster.on('exit', (w, code, signal) => {
    void metrics.retire(w);
    const lived = Date.now() - (started.get(w) ?? Date.now());
    const listened = listening.delete(w);
    started.delete(w);
    if (stopping) {
      if (started.size === 0) {
        logger.info('all workers stopped');
        process.exit(0);
      }
      return;
    }
    startFailures = listened ? 0 : startFailures + 1;
    if (startFailures >= MAX_START_FAILURES) {
      logger.fatal({ code, signal }, `${startFailures} workers in a row exited before they listened; stopping (see their error above)`);
      for (const other of started.keys()) other.process.kill('SIGKILL');
      process.exit(1);
    }
    failures = lived >= HEALTHY_MS ? 0 : failures + 1;
    const delay = failures === 0 ? 0 : Math.min(30_000, 500 * 2 ** (failures - 1));
    logger.error({ pid: w.process.pid, code, signal, restartInMs: delay }, 'a worker exited; starting another');
    // D152: not unref()'d: with every worker dead this timer is all the primary waits for, and an unref()'d one let
    // the primary exit 0 (a supervisor with Restart=on-failure then left the service down)
    setTimeout(() => {
      if (!stopping) metrics.restarted();
      fork();
    }, delay);
  });
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, workers: started.size }, 'stopping the workers');
    if (started.size === 0) process.exit(0);
    for (const w of started.keys()) w.process.kill('SIGTERM');
    setTimeout(() => {
      logger.error('workers did not stop in time; killing them');
      for (const w of started.keys()) w.process.kill('SIGKILL');
      process.exit(1);
    }, STOP_GRACE_MS).unref();
  };
  cluster.on('message', (w, m: { type?: string; id?: number } | null) => {
    metrics.onMessage(w, m);
    if (m?.type !== METRICS_REQ) return;
    const reply = (body: { text: string } | { error: string }) => {
      try {
        if (w.isConnected()) w.send({ type: METRICS_RES, id: m.id, ...body });
      } catch {
        /* the asking worker is gone */
      }
    };
    metrics.gather().then(
      (text) => reply({ text }),
      (err: Error) => reply({ error: err.message }),
    );
  });
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // D261: SIGHUP reloads the TLS files; each worker serves its own sockets, so each is told
  if (process.env.TLS_CERT_FILE?.trim()) process.on('SIGHUP', () => {
    for (const w of started.keys()) w.process.kill('SIGHUP');
  });
  logger.info({ workers: n, pid: process.pid }, `starting ${n} worker processes on one port`);
  for (let i = 0; i < n; i++) fork();
}

/**
 * In a worker of a cluster: the whole service's metrics, gathered by the primary (`registry` is what this worker
 * gives when asked). Null outside a cluster: the process's own registry is the whole service.
 */
export function clusterMetricsSource(registry: Registry): (() => Promise<string>) | null {
  if (!cluster.isWorker || !process.send) return null;
  AggregatorRegistry.setRegistries([registry]);
  new AggregatorRegistry(); // makes this worker answer the primary's requests for its registry
  let next = 0;
  const pending = new Map<number, { resolve: (text: string) => void; reject: (err: Error) => void; timer: NodeJS.Timeout }>();
  process.on('message', (m: { type?: string; id?: number; text?: string; error?: string } | null) => {
    if (m?.type !== METRICS_RES || typeof m.id !== 'number') return;
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    clearTimeout(p.timer);
    if (typeof m.text === 'string') p.resolve(m.text);
    else p.reject(new Error(m.error ?? 'no metrics'));
  });
  return () =>
    new Promise<string>((resolve, reject) => {
      const id = next++;
      // the primary gives up on a silent worker after 5 s; this waits twice that for its answer (D237: 6 s left a
      // loaded primary one second to sum the registries and answer, and the scrape fell back to this worker's own)
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error('the primary did not answer'));
      }, 10_000);
      pending.set(id, { resolve, reject, timer });
      process.send!({ type: METRICS_REQ, id });
    });
}
