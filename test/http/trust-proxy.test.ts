// C1.5 TRUST_PROXY: the client IP is the socket's unless TRUST_PROXY names a hop count or the proxies to believe;
// "trust everyone" is refused. A forged X-Forwarded-For changes neither a rate-limit bucket nor the IP kept as
// mandate-signing evidence.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { anAccount } from '../helpers/onboarding-factories.ts';

const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;
const hidden = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';

describe('TRUST_PROXY configuration', () => {
  it('unset or false trusts nobody; a hop count; a list of addresses and CIDRs', () => {
    expect(loadConfig({}).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).TRUST_PROXY).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).TRUST_PROXY).toBe(2);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1, 192.168.0.0/16,::1,loopback' }).TRUST_PROXY).toEqual([
      '10.0.0.1',
      '192.168.0.0/16',
      '::1',
      'loopback',
    ]);
  });

  it('"true" and anything that is not an address are refused, naming the accepted forms', () => {
    for (const v of ['true', 'yes', '*', '10.0.0.0/33', 'proxy.example.org']) {
      let err: unknown;
      try {
        loadConfig({ TRUST_PROXY: v });
      } catch (e) {
        err = e;
      }
      expect(err, v).toBeInstanceOf(ConfigError);
      const issue = (err as ConfigError).issues.find((i) => i.key === 'TRUST_PROXY');
      expect(issue?.message).toMatch(/hop count.*addresses\/CIDRs.*"true"/);
    }
  });
});

describe('the client IP with and without trusted proxies', () => {
  let direct: TestService;
  let proxied: TestService;
  let hops: TestService;
  let partner: TestPartner;

  beforeAll(async () => {
    const env = { RATE_LIMIT_TOKEN_IP_PER_MIN: '3', RATE_LIMIT_TOKEN_PER_MIN: '100' };
    direct = await createTestService({ env });
    // inject's socket address is 127.0.0.1: here it is the trusted proxy
    proxied = await createTestService({ env: { ...env, TRUST_PROXY: '127.0.0.1' }, db: direct.testDb });
    hops = await createTestService({ env: { ...env, TRUST_PROXY: '1' }, db: direct.testDb });
    partner = await aPartner(direct.deps);
  });
  afterAll(async () => {
    await hops?.close();
    await proxied?.close();
    await direct?.close();
  });

  const token = (s: TestService, remoteAddress: string, xff: string) =>
    s.app.inject({
      method: 'POST',
      url: '/oauth/token',
      remoteAddress,
      headers: { 'x-forwarded-for': xff },
      payload: { grant_type: 'client_credentials', client_id: `c-${Math.random()}`, client_secret: 'x' },
    });

  it('without TRUST_PROXY a forged X-Forwarded-For does not give a fresh rate-limit bucket', async () => {
    const codes = [];
    for (let i = 0; i < 5; i++) codes.push((await token(direct, '198.51.100.40', `203.0.113.${10 + i}`)).statusCode);
    expect(codes).toEqual([401, 401, 401, 429, 429]);
    const keys = (await direct.deps.db.selectFrom('rate_limits').select('key').where('key', 'like', 'token-ip:%').execute()).map((r) => r.key);
    expect(keys).toContain('token-ip:198.51.100.40');
    expect(keys.filter((k) => k.startsWith('token-ip:203.0.113.'))).toEqual([]);
  });

  it('behind a trusted proxy (address or hop count) the forwarded address is the client', async () => {
    expect((await token(proxied, '127.0.0.1', '203.0.113.50')).statusCode).toBe(401);
    // one hop: the address the nearest proxy saw, not what the client wrote before it
    expect((await token(hops, '10.1.1.1', '192.0.2.99, 203.0.113.51')).statusCode).toBe(401);
    // a proxy not in the list is not believed
    expect((await token(proxied, '10.9.9.9', '203.0.113.52')).statusCode).toBe(401);
    const keys = (await direct.deps.db.selectFrom('rate_limits').select('key').where('key', 'like', 'token-ip:%').execute()).map((r) => r.key);
    expect(keys).toEqual(expect.arrayContaining(['token-ip:203.0.113.50', 'token-ip:203.0.113.51', 'token-ip:10.9.9.9']));
    expect(keys).not.toContain('token-ip:192.0.2.99');
    expect(keys).not.toContain('token-ip:203.0.113.52');
  });

  const sign = async (s: TestService, headers: Record<string, string>) => {
    const a = await anAccount(s, partner);
    const link = await s.app.inject({
      method: 'POST',
      url: '/v1/mandate-links',
      headers: bearer(await partner.cpoToken()),
      payload: { connection_id: a.connection_id },
    });
    expect(link.statusCode).toBe(201);
    const url = pathOf(link.json().url);
    const page = await s.app.inject({ method: 'GET', url });
    const res = await s.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams({ full_name: 'Piet Klant', consent: 'yes', clause_sha256: hidden(page.body, 'clause_sha256') }).toString(),
    });
    expect([200, 303]).toContain(res.statusCode);
    const m = await s.deps.db.selectFrom('mandates').select('client_ip').where('connection_id', '=', a.connection_id).executeTakeFirstOrThrow();
    return m.client_ip;
  };

  it('the signing evidence keeps the socket address when X-Forwarded-For is not trusted', async () => {
    expect(await sign(direct, { 'x-forwarded-for': '203.0.113.9' })).toBe('127.0.0.1');
  });

  it('the signing evidence keeps the forwarded address behind a trusted proxy', async () => {
    expect(await sign(proxied, { 'x-forwarded-for': '203.0.113.9' })).toBe('203.0.113.9');
  });
});
