// Operations (issue 2 item 8): /healthz, /readyz (503 when the database is gone), /metrics, /openapi.json
// (every route with its security requirement) and /docs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registeredRoutes } from '../../src/http/app.ts';
import type { RouteRegistrar } from '../../src/http/types.ts';
import { createTestService, type TestService } from '../helpers/app.ts';

const probe: RouteRegistrar = (app) => {
  app.post(
    '/v1/probe::batch',
    {
      config: { auth: { accepts: ['cpo'], scope: 'cpo:sessions:write' } },
      schema: { response: { 200: z.object({ ok: z.boolean() }) } },
    },
    async () => ({ ok: true }),
  );
};

describe('operations', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService({ extraRoutes: [probe] });
  });
  afterAll(() => svc?.close());

  it('GET /healthz and GET /readyz answer 200', async () => {
    expect((await svc.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await svc.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', database: svc.deps.dbKind });
  });

  it('GET /metrics has process metrics and request durations by method, route and status', async () => {
    await svc.app.inject({ method: 'GET', url: '/healthz' });
    await svc.app.inject({ method: 'POST', url: '/v1/probe:batch' });
    await svc.app.inject({ method: 'GET', url: '/no/such/route/123' });
    const res = await svc.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    const text = res.body;
    expect(text).toContain('process_cpu_seconds_total');
    // D62: nothing that walks every open socket on each scrape; the descriptor count stays (read without blocking)
    expect(text).not.toMatch(/^nodejs_active_(handles|resources)/m);
    if (process.platform === 'linux') expect(text).toMatch(/^process_open_fds [1-9]\d*$/m);
    expect(text).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} \d+/);
    expect(text).toMatch(/http_request_duration_seconds_count\{method="POST",route="\/v1\/probe:batch",status="401"\} 1/);
    expect(text).toMatch(/route="<unmatched>",status="404"/);
    expect(text).not.toContain('/no/such/route');
  });

  it('/openapi.json is OpenAPI 3.1 and lists every route with its security requirement', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.components.securitySchemes.cpoToken.flows.clientCredentials.tokenUrl).toBe(`${svc.config.PUBLIC_BASE_URL}/oauth/token`);
    expect(Object.keys(doc.components.securitySchemes)).toEqual(expect.arrayContaining(['cpoToken', 'partnerKey', 'personalToken', 'adminToken']));

    const routes = registeredRoutes(svc.app);
    expect(routes.length).toBeGreaterThan(5);
    for (const r of routes) {
      if (r.hidden || r.method === 'HEAD') continue;
      const path = r.url.replace(/\/:([A-Za-z_]\w*)/g, '/{$1}').replace(/::/g, ':');
      const op = doc.paths[path]?.[r.method.toLowerCase()];
      expect(op, `${r.method} ${r.url} is in the document`).toBeDefined();
      expect(r.auth, `${r.method} ${r.url} declares its auth`).toBeDefined();
      const expected = 'public' in r.auth! ? [] : 'admin' in r.auth! ? [{ adminToken: [] }] : undefined;
      if (expected) expect(op.security).toEqual(expected);
      else expect(op.security?.length).toBeGreaterThan(0);
    }
    expect(doc.paths['/v1/probe:batch'].post.security).toEqual([{ cpoToken: ['cpo:sessions:write'] }]);
    expect(doc.paths['/oauth/token'].post.security).toEqual([]);
    // the platform's own answers are documented on every operation they can happen on
    const batch = doc.paths['/v1/probe:batch'].post.responses;
    expect(Object.keys(batch).sort()).toEqual(['200', '401', '403', '429', '503']);
    expect(batch['403'].content['application/json'].schema.allOf[1].properties).toHaveProperty('required_scope');
    expect(doc.paths['/healthz'].get.responses).not.toHaveProperty('429');
    expect(doc.paths['/admin/partners'].post.security).toEqual([{ adminToken: [] }]);
  });

  it('/docs renders the API reference from /openapi.json, its script served by the app', async () => {
    const page = await svc.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('/openapi.json');
    const scripts = [...page.body.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) expect(src, 'no script from another host').not.toMatch(/^(https?:)?\/\//);
    const redirect = await svc.app.inject({ method: 'GET', url: '/docs' });
    expect([200, 301, 302]).toContain(redirect.statusCode);
    const asset = await svc.app.inject({ method: 'GET', url: '/docs/js/scalar.js' });
    expect(asset.statusCode).toBe(200);
    expect(asset.headers['content-type']).toContain('javascript');
  });

  it('/readyz answers 503 when the database is gone', async () => {
    const other = await createTestService();
    await other.testDb.close();
    const res = await other.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: 'not_ready', detail: expect.any(String) });
    expect((await other.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    await other.close();
  });
});
