// D154: requests pipelined past MAX_PIPELINED on one connection never reach fastify or the routes. Node's parser
// emits every request of one read at once; the bound used to close the socket only after fastify had started each
// of them (1,500 `GET /openapi.json` in one write: RSS 226 MB → 1.9 GB, /healthz after 6 s). A raw socket that
// writes thousands of requests in one write and never reads, as the audit's client did; the assertions count the
// handler's runs, never time.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PIPELINED } from '../../src/http/server-bounds.ts';
import type { RouteRegistrar } from '../../src/http/types.ts';
import { createTestService, type TestService } from '../helpers/app.ts';

let runs = 0;
const counted: RouteRegistrar = (app) => {
  app.get('/test/counted', { config: { auth: { public: true }, rateLimit: false } }, async () => {
    runs += 1;
    return { ok: true };
  });
};

/** A connection that writes `text` in one write and never reads; resolves once the server has closed it. */
function flood(svc: TestService, text: string): Promise<void> {
  return new Promise((resolve) => {
    const socket = net.connect(Number(new URL(svc.url).port), '127.0.0.1');
    socket.pause(); // never reads: only the server's reset or close ends it
    socket.on('error', () => resolve());
    socket.on('close', () => resolve());
    socket.once('connect', () => socket.write(text));
    // the answers are never read, so a FIN stays unseen behind them: ask the kernel whether the peer is gone
    const t = setInterval(() => {
      if (socket.destroyed) return clearInterval(t);
      socket.write('\r\n', (err) => {
        if (err) {
          clearInterval(t);
          resolve();
        }
      });
    }, 100);
  });
}

describe('pipelined requests past the bound (D154)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService({ listen: true, extraRoutes: [counted] });
  });
  afterAll(() => svc?.close());

  it('one write of 3,000 requests on a connection that never reads: at most MAX_PIPELINED reach the route', { timeout: 60_000 }, async () => {
    runs = 0;
    await flood(svc, 'GET /test/counted HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(3000));
    // a request on another connection goes through the same dispatch after the flood's read was handled
    expect((await fetch(`${svc.url}/test/counted`)).status).toBe(200);
    expect(runs).toBeGreaterThan(1);
    expect(runs).toBeLessThanOrEqual(MAX_PIPELINED + 1);
    const metrics = await (await fetch(`${svc.url}/metrics`)).text();
    expect(metrics).toMatch(/^http_pipelining_closed_total [1-9]/m);
  });

  it('the same flood of GET /openapi.json: the process answers everyone else, and /openapi.json is the same text each time', { timeout: 60_000 }, async () => {
    const first = await (await fetch(`${svc.url}/openapi.json`)).text();
    await Promise.all([1, 2, 3, 4].map(() => flood(svc, 'GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(1500))));
    expect((await fetch(`${svc.url}/healthz`)).status).toBe(200);
    const again = await fetch(`${svc.url}/openapi.json`);
    expect(again.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await again.text()).toBe(first);
    expect(JSON.parse(first)).toMatchObject({ openapi: '3.1.0', servers: [{ url: svc.url }] });
  });
});
