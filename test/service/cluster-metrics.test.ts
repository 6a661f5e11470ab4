// D237: the primary's gathering of /metrics with WORKERS above 1 (src/cluster-metrics.ts) asks only the workers that
// listen; one still starting (forked after a worker died, booting) is counted as `starting`, not waited for as a
// silent one. Before, every scrape during a replacement's boot waited 5 s for it, and on a loaded machine the asking
// worker's own 6 s wait ran out first: the scrape answered one worker's figures (every total fell, a false reset).
import type { Worker } from 'node:cluster';
import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { clusterMetrics } from '../../src/cluster-metrics.ts';

/** A stand-in for a listening worker: it answers the primary's request with its registry, as prom-client's does. */
function answeringWorker(registry: Registry, deliver: (w: Worker, m: unknown) => void): Worker {
  const w = {
    isConnected: () => true,
    send(m: { requestId: number }) {
      void registry.getMetricsAsJSON().then((json) => deliver(w, { type: 'prom-client:getMetricsRes', requestId: m.requestId, metrics: [json] }));
      return true;
    },
  } as unknown as Worker;
  return w;
}

describe('D237: the cluster gathering and a worker that is still starting', () => {
  it('asks the listening workers only and counts the starting one as starting, not silent', async () => {
    const registry = new Registry();
    new Counter({ name: 'calls_total', help: 'calls', registers: [registry] }).inc(3);
    let starting = 1;
    const cm = clusterMetrics(() => [worker], () => starting);
    const worker = answeringWorker(registry, (w, m) => cm.onMessage(w, m));
    const text = await cm.gather();
    expect(text).toMatch(/^calls_total 3$/m);
    expect(text).toMatch(/^cluster_workers\{state="answered"\} 1$/m);
    expect(text).toMatch(/^cluster_workers\{state="silent"\} 0$/m);
    expect(text).toMatch(/^cluster_workers\{state="starting"\} 1$/m);
    starting = 0; // it listens now
    expect(await cm.gather()).toMatch(/^cluster_workers\{state="starting"\} 0$/m);
  });
});
