// Graceful stop (SIGTERM in main.ts calls service.stop()): stop accepting, finish in-flight requests,
// close the database. The process-level SIGTERM → exit 0 is in start.test.ts.
import { describe, expect, it } from 'vitest';
import type { RouteRegistrar } from '../../src/http/types.ts';
import { createTestService } from '../helpers/app.ts';
import { eventually } from '../helpers/ocpp-factories.ts';

describe('graceful stop', () => {
  it('finishes the request in flight, refuses new ones, then closes the database', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const isStarted = new Promise<void>((r) => (started = r));
    const slow: RouteRegistrar = (app) => {
      app.get('/probe/slow', { config: { auth: { public: true } } }, async () => {
        started();
        await gate;
        return { done: true };
      });
    };
    const svc = await createTestService({ listen: true, extraRoutes: [slow] });
    const inflight = fetch(`${svc.url}/probe/slow`);
    await isStarted;
    const stopping = svc.close();
    // D120: readiness fails from the first moment, so a load balancer stops sending here while sockets drain
    const ready = await fetch(`${svc.url}/readyz`).then(async (r) => ({ status: r.status, body: await r.json() }), () => 'refused');
    if (ready !== 'refused') expect(ready).toEqual({ status: 503, body: { error: 'not_ready', detail: 'The service is stopping.' } });
    // once the HTTP server closes (the OCPP sockets drain first), a new request is refused while the slow one finishes
    await eventually(async () => expect([503, 'refused']).toContain(await fetch(`${svc.url}/healthz`).then((r) => r.status, () => 'refused')));
    release();
    const res = await inflight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true });
    await stopping;
    await expect(svc.deps.db.selectFrom('partners').select('id').execute()).rejects.toThrow();
  });
});
