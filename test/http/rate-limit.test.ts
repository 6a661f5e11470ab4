// C1.5: limits per credential, counted in PostgreSQL so two processes on one database share the count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runJobExclusive } from '../../src/jobs/scheduler.ts';
import { rateLimitCleanupJob } from '../../src/jobs/rate-limit-cleanup.job.ts';
import type { RouteRegistrar } from '../../src/http/types.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, aUser, bearer, type TestPartner } from '../helpers/factories.ts';

const probe: RouteRegistrar = (app) => {
  app.post('/partner/probe', { config: { auth: { accepts: ['partner'] } } }, async () => ({ ok: true }));
  app.get('/probe/sessions', { config: { auth: { accepts: ['personal'], scope: 'chargers:read' } } }, async () => ({ ok: true }));
  app.get('/v1/probe/catalog', { config: { auth: { accepts: ['cpo'] } } }, async () => ({ ok: true }));
  app.post(
    '/probe/validated',
    { config: { auth: { accepts: ['personal'], scope: 'chargers:read' } }, schema: { body: z.object({ n: z.number() }) } },
    async () => ({ ok: true }),
  );
};

const limits = {
  RATE_LIMIT_PARTNER_PER_MIN: '3',
  RATE_LIMIT_PERSONAL_PER_MIN: '5',
  RATE_LIMIT_CPO_PER_MIN: '4',
  RATE_LIMIT_TOKEN_PER_MIN: '2',
  RATE_LIMIT_PUBLIC_PER_MIN: '1000',
};

describe('rate limits (C1.5)', () => {
  let a: TestService;
  let b: TestService;
  let partner: TestPartner;

  beforeAll(async () => {
    a = await createTestService({ env: limits, extraRoutes: [probe] });
    b = await createTestService({ env: limits, extraRoutes: [probe], db: a.testDb });
    partner = await aPartner(a.deps);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('two app instances on one database share the count; the 4th request is 429', async () => {
    const call = (s: TestService) => s.app.inject({ method: 'POST', url: '/partner/probe', headers: bearer(partner.apiKey) });
    const responses = [await call(a), await call(b), await call(a), await call(b), await call(a)];
    expect(responses.map((r) => r.statusCode)).toEqual([200, 200, 200, 429, 429]);

    expect(responses[0]!.headers['ratelimit-policy']).toBe('"partner";q=3;w=60');
    expect(responses[0]!.headers['ratelimit']).toMatch(/^"partner";r=2;t=\d+$/);
    expect(responses[1]!.headers['ratelimit']).toMatch(/^"partner";r=1;t=\d+$/);
    expect(responses[2]!.headers['ratelimit']).toMatch(/^"partner";r=0;t=\d+$/);

    const limited = responses[3]!;
    const body = limited.json();
    expect(body).toEqual({ error: 'Too many requests', retry_after_seconds: expect.any(Number) });
    expect(Number.isInteger(body.retry_after_seconds)).toBe(true);
    expect(body.retry_after_seconds).toBeGreaterThan(0);
    expect(body.retry_after_seconds).toBeLessThanOrEqual(60);
    expect(limited.headers['retry-after']).toBe(String(body.retry_after_seconds));
    expect(limited.headers['ratelimit-policy']).toBe('"partner";q=3;w=60');

    const row = await a.deps.db.selectFrom('rate_limits').selectAll().where('key', 'like', 'partner:%').executeTakeFirstOrThrow();
    expect(row.count).toBe(5);
  });

  it('counts per credential: another key and a personal token have their own counters', async () => {
    const other = await aPartner(a.deps);
    const res = await b.app.inject({ method: 'POST', url: '/partner/probe', headers: bearer(other.apiKey) });
    expect(res.statusCode).toBe(200);
    const user = await aUser(a.deps);
    const p = await a.app.inject({ method: 'GET', url: '/probe/sessions', headers: bearer(user.token) });
    expect(p.headers['ratelimit-policy']).toBe('"personal";q=5;w=60');
    expect(p.headers['ratelimit']).toMatch(/^"personal";r=4;t=\d+$/);
  });

  it('every token of one CPO client shares the client counter', async () => {
    const t1 = await partner.cpoToken();
    const t2 = await partner.cpoToken();
    const codes = [];
    for (const t of [t1, t2, t1, t2, t1]) {
      codes.push((await a.app.inject({ method: 'GET', url: '/v1/probe/catalog', headers: bearer(t) })).statusCode);
    }
    expect(codes).toEqual([200, 200, 200, 200, 429]);
  });

  it('the token endpoint is limited per client_id', async () => {
    const body = { grant_type: 'client_credentials', client_id: partner.clientId, client_secret: partner.clientSecret };
    const codes = [];
    for (const s of [a, b, a]) codes.push((await s.app.inject({ method: 'POST', url: '/oauth/token', payload: body })).statusCode);
    expect(codes).toEqual([200, 200, 429]);
    const other = await aPartner(a.deps);
    const res = await a.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { ...body, client_id: other.clientId, client_secret: other.clientSecret },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit-policy']).toBe('"token";q=2;w=60');
  });

  it("wrong secrets for a client_id count against the sender's IP, never the client's own count (D125)", async () => {
    const victim = await aPartner(a.deps);
    const guess = { grant_type: 'client_credentials', client_id: victim.clientId, client_secret: 'wrong' };
    for (let i = 0; i < 5; i++) {
      const r = await a.app.inject({ method: 'POST', url: '/oauth/token', payload: guess });
      expect(r.statusCode).toBe(401);
      expect(r.headers['ratelimit-policy']).not.toContain('"token";');
    }
    // the client itself still has its whole count (2 here)
    const real = { ...guess, client_secret: victim.clientSecret };
    const codes = [];
    for (let i = 0; i < 3; i++) codes.push((await a.app.inject({ method: 'POST', url: '/oauth/token', payload: real })).statusCode);
    expect(codes).toEqual([200, 200, 429]);
  });

  it('a refused request counts against the client IP and carries the headers; its status stays', async () => {
    const res = await a.app.inject({ method: 'POST', url: '/partner/probe', headers: bearer('pk_test_not-a-key') });
    expect(res.statusCode).toBe(401);
    expect(res.headers['ratelimit-policy']).toBe('"public";q=1000;w=60');
    expect(res.headers['ratelimit']).toMatch(/^"public";r=\d+;t=\d+$/);
    const unknown = await a.app.inject({ method: 'GET', url: '/no/such/route' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['ratelimit-policy']).toBe('"public";q=1000;w=60');
  });

  it('a request with a valid credential that fails validation counts against that credential', async () => {
    const user = await aUser(a.deps);
    const first = await a.app.inject({ method: 'GET', url: '/probe/sessions', headers: bearer(user.token) });
    expect(first.headers['ratelimit']).toMatch(/^"personal";r=4;/);
    const bad = await a.app.inject({ method: 'POST', url: '/probe/validated', headers: bearer(user.token), payload: { n: 'not a number' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['ratelimit']).toMatch(/^"personal";r=3;/);
  });

  it('a client over its limit hears 429 whatever its request: a body that is also wrong, or not JSON (D147)', async () => {
    const user = await aUser(a.deps);
    const send = (payload: string) =>
      a.app.inject({ method: 'POST', url: '/probe/validated', headers: { ...bearer(user.token), 'content-type': 'application/json' }, payload });
    const codes = [];
    for (let i = 0; i < 5; i++) codes.push((await send('{"n": 1}')).statusCode);
    expect(codes).toEqual([200, 200, 200, 200, 200]);
    for (const body of ['{"n": "not a number"}', '{not json', '{}']) {
      const over = await send(body);
      expect(over.statusCode, body).toBe(429);
      expect(over.json()).toEqual({ error: 'Too many requests', retry_after_seconds: expect.any(Number) });
      expect(over.headers['retry-after']).toBeDefined();
    }
    // the token endpoint: over its count, a token request whose body fails validation is 429 too
    const body = { grant_type: 'client_credentials', client_id: partner.clientId, client_secret: partner.clientSecret };
    let last = await a.app.inject({ method: 'POST', url: '/oauth/token', payload: body });
    for (let i = 0; i < 3 && last.statusCode !== 429; i++) last = await a.app.inject({ method: 'POST', url: '/oauth/token', payload: body });
    expect(last.statusCode).toBe(429);
    const badGrant = await a.app.inject({ method: 'POST', url: '/oauth/token', payload: { ...body, grant_type: 'password' } });
    expect(badGrant.statusCode).toBe(429);
  });

  it('operations routes are not counted', async () => {
    const res = await a.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['ratelimit']).toBeUndefined();
  });

  it('the cleanup job deletes counters whose window is over', async () => {
    await a.deps.db.insertInto('rate_limits').values({ key: 'partner:old', count: 9, window_start: new Date(Date.now() - 3600_000), window_ms: 60_000 }).execute();
    const out = await runJobExclusive(a.deps, rateLimitCleanupJob);
    expect(out).toEqual({ ran: true, result: { deleted: 1 } });
    const left = await a.deps.db.selectFrom('rate_limits').select('key').execute();
    expect(left.map((r) => r.key)).not.toContain('partner:old');
    expect(left.length).toBeGreaterThan(0);
  });
});
