// Spec §5 and C1.2–C1.4 on routes this test registers with the same declarations as the real ones
// (later issues repeat these checks on their real routes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteRegistrar } from '../../src/http/types.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, aUser, bearer, type TestPartner } from '../helpers/factories.ts';

const probeRoutes: RouteRegistrar = (app) => {
  const reply = async (req: { principal?: { kind: string } }) => ({ ok: true, kind: req.principal?.kind ?? null });
  app.get('/v1/probe/accounts', { config: { auth: { accepts: ['cpo'], scope: 'cpo:accounts:read' } } }, reply);
  app.get('/v1/probe/catalog', { config: { auth: { accepts: ['cpo'] } } }, reply);
  app.post('/partner/probe', { config: { auth: { accepts: ['partner'] } } }, reply);
  app.get('/probe/sessions', { config: { auth: { accepts: ['personal'], scope: 'chargers:read' } } }, reply);
  app.post('/probe/chargers', { config: { auth: { accepts: ['personal'], scope: 'chargers:write' } } }, reply);
};

const INVALID = 'Missing or invalid API token';

describe('auth matrix (spec §5, C1.2–C1.4)', () => {
  const clock = testClock('2026-11-22T10:00:00Z');
  let svc: TestService;
  let prod: TestService;
  let partner: TestPartner;
  let legacy: TestPartner;
  let user: { token: string };
  let readOnlyUser: { token: string };

  beforeAll(async () => {
    svc = await createTestService({ clock, extraRoutes: [probeRoutes] });
    // a production app on the same database, so keys minted by either are on record for both
    prod = await createTestService({ clock, db: svc.testDb, env: { APP_ENV: 'production' }, extraRoutes: [probeRoutes] });
    partner = await aPartner(svc.deps);
    legacy = await aPartner(svc.deps, { legacyPrefix: true });
    user = await aUser(svc.deps);
    readOnlyUser = await aUser(svc.deps, { scopes: ['chargers:read'] });
  });
  afterAll(async () => {
    await prod?.close();
    await svc?.close();
  });

  const get = (s: TestService, url: string, token?: string, method: 'GET' | 'POST' = 'GET') =>
    s.app.inject({ method, url, headers: token ? bearer(token) : {} });

  it('a missing token, a malformed header and an unknown token: 401 without detail', async () => {
    for (const res of [
      await get(svc, '/v1/probe/catalog'),
      await svc.app.inject({ method: 'GET', url: '/v1/probe/catalog', headers: { authorization: 'Token abc' } }),
      await get(svc, '/v1/probe/catalog', 'cat_unknown'),
      await get(svc, '/probe/sessions', 'ptk_unknown'),
      await get(svc, '/partner/probe', 'pk_test_unknown', 'POST'),
    ]) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: INVALID });
    }
  });

  it('a CPO token works for one hour (injected clock), then 401', async () => {
    const token = await partner.cpoToken();
    expect((await get(svc, '/v1/probe/accounts', token)).json()).toEqual({ ok: true, kind: 'cpo' });
    clock.advance(59 * 60_000);
    expect((await get(svc, '/v1/probe/accounts', token)).statusCode).toBe(200);
    clock.advance(60_000);
    const res = await get(svc, '/v1/probe/accounts', token);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: INVALID });
  });

  it('a revoked partner key is refused', async () => {
    const p = await aPartner(svc.deps);
    const { mintPartnerApiKey } = await import('../../src/domain/credentials/tokens.ts');
    await mintPartnerApiKey(svc.deps, p.partnerId); // one active key: the earlier one is revoked
    expect((await get(svc, '/partner/probe', p.apiKey, 'POST')).statusCode).toBe(401);
  });

  it('a personal token on a /v1 route: 401 with a detail naming the credential', async () => {
    const res = await get(svc, '/v1/probe/catalog', user.token);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: INVALID, detail: expect.stringContaining('CPO access token') });
  });

  it('a CPO token on a /partner route: 401 with detail', async () => {
    const res = await get(svc, '/partner/probe', await partner.cpoToken(), 'POST');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: INVALID, detail: expect.stringContaining('partner API key') });
  });

  it('a partner key works on its routes', async () => {
    const res = await get(svc, '/partner/probe', partner.apiKey, 'POST');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, kind: 'partner' });
  });

  it('a partner key on a scoped route: 403 Insufficient scope with required_scope', async () => {
    for (const [url, scope] of [
      ['/v1/probe/accounts', 'cpo:accounts:read'],
      ['/probe/sessions', 'chargers:read'],
    ] as const) {
      const res = await get(svc, url, partner.apiKey);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ error: 'Insufficient scope', required_scope: scope });
    }
  });

  it('a partner key on an unscoped non-partner route: 403 partner_api_key_scope', async () => {
    const res = await get(svc, '/v1/probe/catalog', partner.apiKey);
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('partner_api_key_scope');
  });

  it('a partner key on the admin API: 403 partner_api_key_scope, not counted as a failed admin login', async () => {
    for (let i = 0; i < 12; i++) {
      const res = await get(svc, '/admin/outbox', partner.apiKey);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'partner_api_key_scope', detail: expect.any(String) });
    }
    // an unknown key of that shape is a failed login as before, and the admin token still works
    expect((await get(svc, '/admin/outbox', 'pk_test_not-on-record')).statusCode).toBe(401);
    expect((await get(svc, '/admin/outbox', TEST_ADMIN_TOKEN)).statusCode).toBe(200);
    // a sandbox key on the production host is not a key of that host: the admin check answers
    expect((await get(prod, '/admin/outbox', partner.apiKey)).statusCode).toBe(401);
  });

  it('a partner key on a route that does not exist: 404', async () => {
    const res = await get(svc, '/v1/probe/nothing-here', partner.apiKey);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'not_found', detail: expect.any(String) });
  });

  it('a sandbox key on the production host: 401 with detail (on record, and by prefix when unknown)', async () => {
    const onRecord = await get(prod, '/partner/probe', partner.apiKey, 'POST');
    expect(onRecord.statusCode).toBe(401);
    expect(onRecord.json()).toEqual({ error: INVALID, detail: expect.stringContaining('sandbox') });
    const unknown = await get(prod, '/partner/probe', 'pk_test_not-on-record', 'POST');
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toEqual({ error: INVALID, detail: expect.stringContaining('sandbox host') });
  });

  it('a production key on the sandbox host: 401 with detail', async () => {
    const live = await aPartner(prod.deps);
    expect(live.apiKey.startsWith('pk_live_')).toBe(true);
    expect((await get(prod, '/partner/probe', live.apiKey, 'POST')).statusCode).toBe(200);
    const res = await get(svc, '/partner/probe', live.apiKey, 'POST');
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: INVALID, detail: expect.stringContaining('production') });
    const unknown = await get(svc, '/partner/probe', 'pk_live_not-on-record', 'POST');
    expect(unknown.json()).toEqual({ error: INVALID, detail: expect.stringContaining('production host') });
  });

  it('a sandbox key minted with the legacy production prefix works on sandbox, not on production', async () => {
    expect(legacy.apiKey.startsWith('pk_live_')).toBe(true);
    const row = await svc.deps.db.selectFrom('partner_api_keys').select('environment').where('partner_id', '=', legacy.partnerId).executeTakeFirstOrThrow();
    expect(row.environment).toBe('sandbox');
    expect((await get(svc, '/partner/probe', legacy.apiKey, 'POST')).statusCode).toBe(200);
    const res = await get(prod, '/partner/probe', legacy.apiKey, 'POST');
    expect(res.statusCode).toBe(401);
    expect(res.json().detail).toContain('sandbox');
  });

  it('on production every /sandbox path is 404, whatever the credential (C2.6)', async () => {
    const { registeredRoutes } = await import('../../src/http/app.ts');
    const sandboxRoutes = registeredRoutes(prod.app).filter((r) => r.url.startsWith('/sandbox') && r.method !== 'HEAD');
    for (const r of [...sandboxRoutes, { method: 'POST', url: '/sandbox/anything' }]) {
      const url = r.url.replace(/:(\w+)/g, '00000000-0000-4000-8000-000000000000');
      const res = await prod.app.inject({ method: r.method as 'POST', url, headers: bearer(await partner.cpoToken()), payload: {} });
      expect(res.statusCode, `${r.method} ${url}`).toBe(404);
    }
  });

  it('a missing scope: 403 Insufficient scope with required_scope and detail', async () => {
    const narrow = await partner.cpoToken(['cpo:accounts:write']);
    const res = await get(svc, '/v1/probe/accounts', narrow);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ error: 'Insufficient scope', required_scope: 'cpo:accounts:read', detail: expect.any(String) });
    // the unscoped CPO route takes any valid CPO token
    expect((await get(svc, '/v1/probe/catalog', narrow)).statusCode).toBe(200);

    const personal = await get(svc, '/probe/chargers', readOnlyUser.token, 'POST');
    expect(personal.statusCode).toBe(403);
    expect(personal.json()).toEqual({ error: 'Insufficient scope', required_scope: 'chargers:write', detail: expect.any(String) });
    expect((await get(svc, '/probe/sessions', readOnlyUser.token)).statusCode).toBe(200);
  });
});

describe('credential store unavailable (C6.1)', () => {
  it('503 Authentication is temporarily unavailable', async () => {
    const svc = await createTestService({ extraRoutes: [probeRoutes] });
    const user = await aUser(svc.deps);
    await svc.testDb.close();
    const res = await svc.app.inject({ method: 'GET', url: '/probe/sessions', headers: bearer(user.token) });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: 'Authentication is temporarily unavailable, try again shortly' });
    expect(res.headers['retry-after']).toBe('5'); // D155
    await svc.close();
  });
});
