// Errors (spec §7, issue 2 item 9) and logs (item 8): every error body is {error, detail?}; 5xx bodies never
// show internals; every request log line carries the request id; secrets and IBANs never reach a log line.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import type { RouteRegistrar } from '../../src/http/types.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, bearer } from '../helpers/factories.ts';

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, cb) {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    cb();
  },
});

const SECRET_IBAN = 'NL91ABNA0417164300';
const probe: RouteRegistrar = (app) => {
  app.get('/probe/boom', { config: { auth: { public: true } } }, async () => {
    throw new Error('connection to postgres://admin:hunter2@db.internal:5432 failed at /srv/app/src/x.ts:12');
  });
  app.post('/probe/echo', { config: { auth: { public: true } } }, async (req) => {
    // a careless log call: the redaction must still hold
    req.log.info({ body: req.body, password: 'pw-123456', client_secret: 'cs_abc', iban: SECRET_IBAN, account: { iban: SECRET_IBAN } }, 'echo');
    return { ok: true };
  });
};

describe('errors and logs', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService({
      env: { HTTP_MAX_BODY_BYTES: '2048' },
      extraRoutes: [probe],
      logger: createLogger({ level: 'info', destination: sink }),
    });
  });
  afterAll(() => svc?.close());

  it('malformed JSON: 400 invalid_json', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/probe/echo', headers: { 'content-type': 'application/json' }, payload: '{"a":' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_json', detail: expect.any(String) });
  });

  it('a body over HTTP_MAX_BODY_BYTES: 413', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/probe/echo', payload: { pad: 'x'.repeat(5000) } });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: 'payload_too_large', detail: expect.stringContaining('2048') });
  });

  it('an unknown route: 404 {error, detail}', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/nothing/here?x=1' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'not_found', detail: 'No route GET /nothing/here' });
  });

  it('a path the router cannot take is answered in the {error, detail} shape too', async () => {
    const admin = bearer(svc.config.ADMIN_TOKEN!);
    for (const url of ['/admin/partners/%zz/api-keys', '/admin/partners/%ED%A0%80/api-keys']) {
      const res = await svc.app.inject({ method: 'POST', url, headers: admin });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_request', detail: 'The URL path is not valid percent-encoded UTF-8.' });
    }
    const long = await svc.app.inject({ method: 'POST', url: `/admin/partners/${'x'.repeat(101)}/api-keys`, headers: admin });
    expect(long.statusCode).toBe(414);
    expect(long.json()).toEqual({ error: 'uri_too_long', detail: 'A path parameter is longer than 100 characters.' });
    expect(long.headers['x-request-id']).toBeTruthy();
  });

  it('a schema violation: 400 invalid_request naming the field', async () => {
    const res = await svc.app.inject({ method: 'POST', url: '/admin/users', headers: bearer(svc.config.ADMIN_TOKEN!), payload: { email: 'not-an-email' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_request', detail: expect.stringContaining('email') });
  });

  it('a 5xx never shows internals, and the operator finds it in the log by request id', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/probe/boom', headers: { 'x-request-id': 'req-boom-1' } });
    expect(res.statusCode).toBe(500);
    expect(Object.keys(res.json()).sort()).toEqual(['detail', 'error']);
    expect(res.json().error).toBe('internal_error');
    expect(res.body).not.toMatch(/hunter2|postgres|\/srv|stack/);
    expect(res.headers['x-request-id']).toBe('req-boom-1');
    const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'unhandled error');
    expect(logged?.reqId).toBe('req-boom-1');
  });

  it('a request id that is not a sane token is replaced by a UUID', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'a b\tc'.repeat(3) } });
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('every request log line has a request id; secrets and IBANs are redacted', async () => {
    const p = await aPartner(svc.deps);
    lines.length = 0;
    await svc.app.inject({ method: 'POST', url: '/probe/echo', headers: bearer(p.apiKey), payload: { iban: SECRET_IBAN, password: 'pw-123456' } });
    await svc.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { authorization: `Basic ${Buffer.from(`${p.clientId}:${p.clientSecret}`).toString('base64')}` },
      payload: { grant_type: 'client_credentials', client_id: p.clientId, client_secret: p.clientSecret },
    });
    await svc.app.inject({ method: 'GET', url: '/claim/capability-token-123?x=1' });
    await svc.app.inject({ method: 'GET', url: '/probe/x?token=capability-token-456&a=b' });
    svc.deps.logger.info({ req: { headers: { authorization: `Bearer ${p.apiKey}` } }, client_secret: p.clientSecret }, 'direct');
    expect(lines.length).toBeGreaterThan(3);
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const l of parsed.filter((x) => x.msg !== 'direct')) expect(l.reqId, JSON.stringify(l)).toEqual(expect.any(String));
    const all = lines.join('\n');
    expect(all).toContain('/claim/[redacted]?x=1');
    for (const secret of [p.apiKey, p.clientSecret, SECRET_IBAN, 'pw-123456', 'cs_abc', 'hunter2', 'capability-token-123', 'capability-token-456']) {
      expect(all).not.toContain(secret);
    }
    expect(all).toContain('[redacted]');
  });
});
