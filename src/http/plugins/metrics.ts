// GET /metrics data (prom-client on deps.metrics): default process metrics, the request duration histogram by
// method, route and status, and the e-mail outbox's (D217). The route label is the registered path with `::` shown
// as `:` (as in the OpenAPI document: '/v1/sessions:batch'); requests that matched no route share one label, so a
// scan of random paths cannot blow up the number of series.
import type { FastifyRequest } from 'fastify';
import fs from 'node:fs';
import { collectDefaultMetrics, Gauge, Histogram, type Registry } from 'prom-client';
import { clusterMetricsSource } from '../../cluster.ts';
import type { Deps } from '../../deps.ts';
import { outboxMetrics } from '../../domain/invites/metrics.ts';
import type { App } from '../types.ts';

export const UNMATCHED_ROUTE = '<unmatched>';

export function routeLabel(req: FastifyRequest): string {
  const url = req.routeOptions.url;
  return url ? url.replace(/::/g, ':') : UNMATCHED_ROUTE;
}

/**
 * The default metrics that walk every open handle on each scrape are dropped (D62): with 16,000 sockets in a process,
 * listing the handles and resources and reading /proc/self/fd synchronously held the event loop for half a second
 * per scrape, and every charger's answer waited. The open-descriptor count stays, read without blocking.
 */
function withoutPerHandleMetrics(registry: Registry): void {
  for (const name of ['nodejs_active_handles', 'nodejs_active_handles_total', 'nodejs_active_resources', 'nodejs_active_resources_total', 'process_open_fds']) {
    registry.removeSingleMetric(name);
  }
  if (process.platform !== 'linux') return;
  new Gauge({
    name: 'process_open_fds',
    help: 'Number of open file descriptors.',
    registers: [registry],
    async collect() {
      const fds = await fs.promises.readdir('/proc/self/fd').catch(() => null);
      if (fds) this.set(fds.length);
    },
  });
}

const sources = new WeakMap<Registry, (() => Promise<string>) | null>();

/** This process's way to the whole cluster's metrics (null outside a cluster), set up once per registry. */
function clusterSource(registry: Registry): (() => Promise<string>) | null {
  if (!sources.has(registry)) sources.set(registry, clusterMetricsSource(registry));
  return sources.get(registry) ?? null;
}

/**
 * The text GET /metrics answers: in a cluster the whole service's (every worker's registry, gathered by the
 * primary), else this process's. A cluster whose primary does not answer gets this worker's own, with a warning.
 */
export async function metricsText(deps: Deps, log: { warn: (obj: object, msg: string) => void }): Promise<string> {
  const cluster = clusterSource(deps.metrics);
  if (cluster) {
    try {
      return await cluster();
    } catch (err) {
      log.warn({ err: (err as Error).message }, "the cluster's metrics could not be gathered; answering with this worker's own");
    }
  }
  return deps.metrics.metrics();
}

export function metricsPlugin(app: App, deps: Deps): void {
  // every worker must answer the primary's requests from its start, not from the first scrape it serves itself
  clusterSource(deps.metrics);
  if (!deps.metrics.getSingleMetric('process_cpu_seconds_total')) {
    collectDefaultMetrics({ register: deps.metrics });
    withoutPerHandleMetrics(deps.metrics);
  }
  // D217: the outbox's delivery counter and queue gauges are on every scrape from the start, before any delivery ran
  outboxMetrics(deps);
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration in seconds, by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [deps.metrics],
  });
  app.addHook('onResponse', async (req, reply) => {
    duration.observe(
      { method: req.method, route: routeLabel(req), status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });
}
