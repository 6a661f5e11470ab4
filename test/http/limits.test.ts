// C1.5 limits that cannot be sidestepped: the token endpoint per client IP as well as per client_id, failed admin
// authentications per client IP, /metrics behind METRICS_TOKEN. Counted in PostgreSQL: two app instances on one
// database share every count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const env = {
  RATE_LIMIT_TOKEN_PER_MIN: '100',
  RATE_LIMIT_TOKEN_IP_PER_MIN: '4',
  RATE_LIMIT_ADMIN_FAIL_PER_MIN: '3',
  METRICS_TOKEN,
};

describe('limits that cannot be sidestepped (C1.5)', () => {
  let a: TestService;
  let b: TestService;
  let partner: TestPartner;

  beforeAll(async () => {
    a = await createTestService({ env });
    b = await createTestService({ env, db: a.testDb });
    partner = await aPartner(a.deps);
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('the token endpoint counts per client IP: invented client ids and forged X-Forwarded-For get no fresh bucket', async () => {
    const ip = '198.51.100.20';
    const codes: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await (i % 2 ? b : a).app.inject({
        method: 'POST',
        url: '/oauth/token',
        remoteAddress: ip,
        headers: { 'x-forwarded-for': `203.0.113.${i}` },
        payload: { grant_type: 'client_credentials', client_id: `invented-${i}-${Math.random()}`, client_secret: 'x' },
      });
      codes.push(res.statusCode);
      if (res.statusCode === 429) {
        expect(res.json()).toEqual({ error: 'Too many requests', retry_after_seconds: expect.any(Number) });
        expect(res.headers['retry-after']).toBe(String(res.json().retry_after_seconds));
        expect(res.headers['ratelimit-policy']).toBe('"token-ip";q=4;w=60');
      }
    }
    expect(codes).toEqual([401, 401, 401, 401, 429, 429]);
    // the right credentials from that IP wait too; another IP is served
    const body = { grant_type: 'client_credentials', client_id: partner.clientId, client_secret: partner.clientSecret };
    const same = await a.app.inject({ method: 'POST', url: '/oauth/token', remoteAddress: ip, payload: body });
    expect(same.statusCode).toBe(429);
    const other = await b.app.inject({ method: 'POST', url: '/oauth/token', remoteAddress: '198.51.100.21', payload: body });
    expect(other.statusCode).toBe(200);
    expect(other.json().access_token).toEqual(expect.any(String));
  });

  it('failed admin authentications are limited per IP: beyond the limit 429 even with the right token, until the window ends', async () => {
    const ip = '198.51.100.30';
    const call = (s: TestService, headers: Record<string, string>, remoteAddress = ip) =>
      s.app.inject({ method: 'GET', url: '/admin/outbox', headers, remoteAddress });
    const fails = [
      await call(a, bearer('wrong-token-0123456789')),
      await call(b, {}),
      await call(a, { authorization: 'Basic abc' }),
    ];
    expect(fails.map((r) => r.statusCode)).toEqual([401, 401, 401]);
    expect(fails[0]!.headers['ratelimit-policy']).toBe('"admin-fail";q=3;w=60');
    expect(fails[2]!.headers['ratelimit']).toMatch(/^"admin-fail";r=0;t=\d+$/);

    const right = await call(b, bearer(TEST_ADMIN_TOKEN));
    expect(right.statusCode).toBe(429);
    const j = right.json();
    expect(j).toEqual({ error: 'Too many requests', retry_after_seconds: expect.any(Number) });
    expect(j.retry_after_seconds).toBeGreaterThan(0);
    expect(j.retry_after_seconds).toBeLessThanOrEqual(60);
    expect(right.headers['retry-after']).toBe(String(j.retry_after_seconds));
    expect((await call(a, bearer('another-guess-0123456789'))).statusCode).toBe(429);

    // another IP is not affected; a right token is never counted
    for (let i = 0; i < 5; i++) expect((await call(a, bearer(TEST_ADMIN_TOKEN), '198.51.100.31')).statusCode).toBe(200);

    // the window ends (moved back in the database, as time would): the right token works again
    await a.deps.db
      .updateTable('rate_limits')
      .set({ window_start: new Date(Date.now() - 120_000) })
      .where('key', '=', `admin-fail:${ip}`)
      .execute();
    expect((await call(b, bearer(TEST_ADMIN_TOKEN))).statusCode).toBe(200);
  });

  it('GET /metrics requires the METRICS_TOKEN bearer when it is set', async () => {
    const none = await a.app.inject({ method: 'GET', url: '/metrics' });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toEqual({ error: expect.any(String), detail: expect.stringContaining('METRICS_TOKEN') });
    const wrong = await a.app.inject({ method: 'GET', url: '/metrics', headers: bearer('not-the-metrics-token') });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).not.toContain('http_request_duration_seconds');
    const admin = await a.app.inject({ method: 'GET', url: '/metrics', headers: bearer(TEST_ADMIN_TOKEN) });
    expect(admin.statusCode).toBe(401);
    const ok = await a.app.inject({ method: 'GET', url: '/metrics', headers: bearer(METRICS_TOKEN) });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('http_request_duration_seconds');
  });

  it('GET /metrics is open when METRICS_TOKEN is unset', async () => {
    const open = await createTestService({ db: a.testDb });
    try {
      const res = await open.app.inject({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(200);
      expect(res.body).toContain('process_cpu_seconds_total');
    } finally {
      await open.close();
    }
  });
});
