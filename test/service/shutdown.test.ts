// Graceful stop (SIGTERM in main.ts calls service.stop()): stop accepting, finish in-flight requests,
// close the database. The process-level SIGTERM → exit 0 is in start.test.ts.
import { describe, expect, it } from 'vitest';
import type { RouteRegistrar } from '../../src/http/types.ts';
import { createTestService } from '../helpers/app.ts';

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
    await new Promise((r) => setTimeout(r, 50));
    const late = await fetch(`${svc.url}/healthz`).then((r) => r.status, () => 'refused');
    expect([503, 'refused']).toContain(late);
    release();
    const res = await inflight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true });
    await stopping;
    await expect(svc.deps.db.selectFrom('partners').select('id').execute()).rejects.toThrow();
  });
});
