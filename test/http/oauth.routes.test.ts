import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, aUser, type TestPartner } from '../helpers/factories.ts';

describe('POST /oauth/token (C1.1)', () => {
  let svc: TestService;
  let partner: TestPartner;
  const clock = testClock('2026-11-22T10:00:00Z');

  beforeAll(async () => {
    svc = await createTestService({ clock });
    partner = await aPartner(svc.deps, { scopes: ['cpo:accounts:read', 'cpo:accounts:write'] });
  });
  afterAll(() => svc.close());

  it('issues a one-hour token from a JSON body', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: partner.clientId, client_secret: partner.clientSecret },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const body = res.json();
    expect(body).toEqual({
      access_token: expect.stringMatching(/^cat_/),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'cpo:accounts:read cpo:accounts:write',
    });
    expect(body).not.toHaveProperty('refresh_token');
  });

  it('issues a token from a form body with a narrowed scope', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: partner.clientId,
        client_secret: partner.clientSecret,
        scope: 'cpo:accounts:read',
      }).toString(),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().scope).toBe('cpo:accounts:read');
  });

  it('refuses HTTP Basic client authentication', async () => {
    const basic = Buffer.from(`${partner.clientId}:${partner.clientSecret}`).toString('base64');
    const res = await svc.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=client_credentials',
    });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'invalid_client', detail: expect.any(String) });
  });

  it('a token issued an hour ago is expired; the injected clock decides', async () => {
    const { resolveBearer } = await import('../../src/domain/credentials/tokens.ts');
    const token = await partner.cpoToken();
    expect(await resolveBearer(svc.deps, token)).toMatchObject({ kind: 'cpo', partnerId: partner.partnerId });
    clock.advance(3600_000);
    expect(await resolveBearer(svc.deps, token)).toBeNull();
    const row = await svc.deps.db.selectFrom('access_tokens').select(['created_at', 'expires_at']).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
    expect(row.expires_at.getTime() - row.created_at.getTime()).toBe(3600_000);
  });

  it.each([
    [{ grant_type: 'password' }, 400, 'unsupported_grant_type'],
    [{ client_id: 'x', client_secret: 'y' }, 400, 'invalid_request'],
    [{ grant_type: 'client_credentials', client_secret: 'y' }, 400, 'invalid_request'],
    [{ grant_type: 'client_credentials', client_id: 'cpo_nope', client_secret: 'y' }, 401, 'invalid_client'],
  ])('refuses %j with %i %s', async (payload, status, error) => {
    const res = await svc.app.inject({ method: 'POST', url: '/oauth/token', payload });
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error, detail: expect.any(String) });
  });

  it('refuses a wrong secret and a scope the client does not hold', async () => {
    const wrong = await svc.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: partner.clientId, client_secret: 'cs_wrong' },
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error).toBe('invalid_client');
    const scope = await svc.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: partner.clientId, client_secret: partner.clientSecret, scope: 'cpo:chargers:write' },
    });
    expect(scope.statusCode).toBe(400);
    expect(scope.json().error).toBe('invalid_scope');
  });

  it('stores no secret in plain text', async () => {
    const token = await partner.cpoToken();
    const user = await aUser(svc.deps);
    const dump = JSON.stringify(
      await Promise.all([
        svc.deps.db.selectFrom('cpo_clients').selectAll().execute(),
        svc.deps.db.selectFrom('access_tokens').selectAll().execute(),
        svc.deps.db.selectFrom('partner_api_keys').selectAll().execute(),
        svc.deps.db.selectFrom('personal_tokens').selectAll().execute(),
      ]),
    );
    expect(dump).not.toContain(partner.clientSecret);
    expect(dump).not.toContain(token);
    expect(dump).not.toContain(partner.apiKey);
    expect(dump).not.toContain(user.token);
    // the key hint is a prefix and the last four characters, never enough to use the key
    expect(dump).toContain(partner.apiKey.slice(-4));
  });

  it('checks the body in one place: a field that is not a string fails the schema, an empty one the grant rules in order', async () => {
    const post = (payload: Record<string, unknown>) => svc.app.inject({ method: 'POST', url: '/oauth/token', payload });
    const ok = { grant_type: 'client_credentials', client_id: partner.clientId, client_secret: partner.clientSecret };
    for (const bad of [{ ...ok, client_id: 42 }, { ...ok, scope: ['cpo:accounts:read'] }, { ...ok, grant_type: null }]) {
      const res = await post(bad);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
    const missing = await post({ client_id: partner.clientId, client_secret: partner.clientSecret });
    expect([missing.statusCode, missing.json()]).toEqual([400, { error: 'invalid_request', detail: 'grant_type is required' }]);
    // C1.1: the grant type is judged before the client fields
    const password = await post({ grant_type: 'password', client_id: '' });
    expect([password.statusCode, password.json().error]).toEqual([400, 'unsupported_grant_type']);
    const empty = await post({ ...ok, client_secret: '' });
    expect([empty.statusCode, empty.json()]).toEqual([400, { error: 'invalid_request', detail: 'client_secret is required' }]);
  });

  it('malformed JSON gives 400 invalid_json', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/json' },
      payload: '{"grant_type":',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_json', detail: expect.any(String) });
  });
});
