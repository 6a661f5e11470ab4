// What the server answers is what /openapi.json says it answers (an outside audit generated a client from the
// document and validated real responses against it). Each case sends a real request through app.inject and checks
// the answer against the live document: its status is documented for the operation, its content type is documented
// for that status, a JSON body validates against that status's schema, an error's code is named there (description
// and examples), and the rate-limit and cache headers the server sent are declared on that response.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aPartner, aUser, bearer, type TestPartner } from '../helpers/factories.ts';
import { anAccount } from '../helpers/onboarding-factories.ts';
import { deref, type Json, operations } from '../helpers/openapi-doc.ts';
import { STATUS_BY_CODE } from '../../src/http/errors.ts';

const Z = '00000000-0000-4000-8000-000000000000';
const ADMIN = bearer(TEST_ADMIN_TOKEN);
const METRICS_TOKEN = 'metrics-token-0123456789';
const RATE_HEADERS = ['ratelimit', 'ratelimit-policy', 'retry-after'];

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

interface Sent {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  /** a JSON body */
  body?: unknown;
  /** a raw body with its content type */
  raw?: string;
  type?: string;
}

interface Answer {
  status: number;
  type: string;
  body: string;
  json: Json | undefined;
  headers: Record<string, unknown>;
  response: Json;
  op: Json;
}

/** The document's operation for a request: the path template whose pattern matches, the fewest parameters first. */
function operationOf(doc: Json, method: string, url: string): { path: string; op: Json } {
  const path = url.split('?')[0]!;
  const candidates = Object.entries(doc.paths as Json)
    .filter(([template, item]) => (item as Json)[method.toLowerCase()] && new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path))
    .sort(([a], [b]) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0));
  const hit = candidates[0];
  if (!hit) throw new Error(`no operation for ${method} ${path}`);
  return { path: hit[0], op: (hit[1] as Json)[method.toLowerCase()] };
}

/** Sends the request and asserts the answer is documented; returns it for further checks. */
async function documented(svc: TestService, doc: Json, req: Sent, expected: { status: number; error?: string }): Promise<Answer> {
  const headers: Record<string, string> = { ...(req.headers ?? {}) };
  let payload: string | undefined;
  if (req.raw !== undefined) {
    payload = req.raw;
    if (req.type) headers['content-type'] = req.type;
  } else if (req.body !== undefined) {
    payload = JSON.stringify(req.body);
    headers['content-type'] = 'application/json';
  }
  const res = await svc.app.inject({ method: req.method, url: req.url, headers, ...(payload !== undefined ? { payload } : {}) });
  const what = `${req.method} ${req.url} → ${res.statusCode} ${res.body.slice(0, 200)}`;
  let json: Json | undefined;
  try {
    json = JSON.parse(res.body) as Json;
  } catch {
    json = undefined;
  }
  expect(res.statusCode, what).toBe(expected.status);
  if (expected.error !== undefined) expect(json?.error, what).toBe(expected.error);

  const { op } = operationOf(doc, req.method, req.url);
  const response = op.responses?.[String(res.statusCode)] as Json | undefined;
  expect(response, `${what}: status documented for ${op.operationId} (${Object.keys(op.responses).join(', ')})`).toBeDefined();
  const type = String(res.headers['content-type'] ?? '').split(';')[0]!.trim();
  const types = Object.keys(response!.content ?? {});
  if (res.body.length) expect(types, `${what}: content type documented for ${op.operationId} ${res.statusCode}`).toContain(type);
  const media = response!.content?.[type] as Json | undefined;
  if (type === 'application/json' && media?.schema) {
    expect(json, `${what}: JSON`).toBeDefined();
    const check = ajv.compile(deref(doc, media.schema) as object);
    expect(check(json), `${what}: ${op.operationId} ${res.statusCode} schema: ${JSON.stringify(check.errors)}`).toBe(true);
  }
  if (res.statusCode >= 400 && typeof json?.error === 'string') {
    const named = Object.values((media?.examples as Json) ?? {}).map((e) => (e as Json).value?.error);
    expect(named, `${what}: ${op.operationId} ${res.statusCode} names ${json.error} in its examples`).toContain(json.error);
    expect(String(response!.description), `${what}: ${op.operationId} ${res.statusCode} names ${json.error}`).toContain(`\`${json.error}\``);
  }
  const declared = Object.keys((response!.headers as Json) ?? {}).map((h) => h.toLowerCase());
  for (const h of RATE_HEADERS) {
    if (res.headers[h] !== undefined) expect(declared, `${what}: ${op.operationId} ${res.statusCode} declares ${h}`).toContain(h);
  }
  return { status: res.statusCode, type, body: res.body, json, headers: res.headers, response: response!, op };
}

/** Whether a value passes an operation's request body schema in the document. */
function bodyAccepted(doc: Json, method: string, path: string, value: unknown): boolean {
  const schema = doc.paths[path][method].requestBody.content['application/json'].schema;
  return ajv.compile(deref(doc, schema) as object)(value) as boolean;
}

async function docOf(svc: TestService): Promise<Json> {
  const res = await svc.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  return res.json() as Json;
}

describe('responses match /openapi.json', () => {
  let svc: TestService;
  let doc: Json;
  let partner: TestPartner;
  let cpo: Record<string, string>;
  let owner: { userId: string; token: string };
  let accountId: string;
  let connectionId: string;
  let chargerId: string;
  let identity: string;

  beforeAll(async () => {
    svc = await createTestService({ seed: true, env: { METRICS_TOKEN } });
    doc = await docOf(svc);
    partner = await aPartner(svc.deps);
    cpo = bearer(await partner.cpoToken());
    owner = await aUser(svc.deps);
    const account = await anAccount(svc, partner);
    accountId = account.account_id;
    connectionId = account.connection_id;
    chargerId = svc.demo!.charger.charger_id;
    identity = svc.demo!.charger.ocpp_identity;
  });
  afterAll(() => svc?.close());

  it('admin operations name their 400, 404 and 409 codes (item 1)', async () => {
    const cases: Array<[Sent, number, string]> = [
      [{ method: 'POST', url: '/admin/partners', body: { name: '' } }, 400, 'invalid_request'],
      [{ method: 'POST', url: '/admin/partners', raw: '{', type: 'application/json' }, 400, 'invalid_json'],
      [{ method: 'POST', url: `/admin/partners/${Z}/api-keys`, body: {} }, 404, 'partner_not_found'],
      [{ method: 'POST', url: '/admin/partners/nope/api-keys', body: {} }, 400, 'invalid_request'],
      [{ method: 'POST', url: `/admin/partners/${Z}/cpo-clients`, body: {} }, 404, 'partner_not_found'],
      [{ method: 'POST', url: '/admin/cpo-clients/cc_unknown/revoke', body: {} }, 404, 'cpo_client_not_found'],
      [{ method: 'POST', url: '/admin/users', body: { email: 'nope' } }, 400, 'invalid_request'],
      [{ method: 'POST', url: `/admin/users/${Z}/api-tokens`, body: { scopes: ['chargers:read'] } }, 404, 'user_not_found'],
      [{ method: 'POST', url: `/admin/users/${owner.userId}/accounts`, body: { account_id: Z } }, 404, 'account_not_found'],
      [{ method: 'POST', url: `/admin/users/${Z}/accounts`, body: { account_id: accountId } }, 404, 'user_not_found'],
      [{ method: 'POST', url: `/admin/users/${Z}/chargers`, body: { nickname: 'x' } }, 404, 'user_not_found'],
      [{ method: 'POST', url: `/admin/users/${owner.userId}/chargers`, body: { nickname: 'x', ocpp_identity: identity } }, 409, 'ocpp_identity_taken'],
      [{ method: 'POST', url: '/admin/jobs/nope/run' }, 404, 'job_not_found'],
      [{ method: 'POST', url: '/admin/catalog/models', body: { brand: 'B', model: 'M', mid_meter: 'no' } }, 400, 'invalid_request'],
      [{ method: 'POST', url: '/admin/ean-register', body: {} }, 400, 'invalid_request'],
      [{ method: 'POST', url: '/admin/referral-codes', body: {} }, 400, 'invalid_request'],
      [{ method: 'POST', url: '/admin/suppressions', body: { email: 'bad' } }, 400, 'invalid_request'],
      [{ method: 'DELETE', url: '/admin/suppressions/nobody%40example.nl' }, 404, 'suppression_not_found'],
      [{ method: 'GET', url: '/admin/energy-months?status=bad' }, 400, 'invalid_request'],
      [{ method: 'POST', url: `/admin/energy-months/${Z}/review`, body: { action: 'start' } }, 404, 'energy_month_not_found'],
      [{ method: 'POST', url: '/admin/ere/sales', body: { quarter: 'bad', ere: 1, price_per_ere: 1 } }, 400, 'invalid_request'],
      [{ method: 'POST', url: `/admin/ere/sales/${Z}/allocations`, body: { account_id: accountId, ere: 1 } }, 404, 'sale_not_found'],
      [{ method: 'POST', url: `/admin/ere/allocations/${Z}/payable` }, 404, 'allocation_not_found'],
      [{ method: 'POST', url: '/admin/ere/payouts', body: { account_id: accountId } }, 409, 'nothing_payable'],
      [{ method: 'POST', url: '/admin/ere/payouts', body: { account_id: Z } }, 404, 'account_not_found'],
      [{ method: 'GET', url: '/admin/sessions/held?limit=0' }, 400, 'invalid_request'],
      [{ method: 'POST', url: `/admin/sessions/${Z}/review`, body: {} }, 400, 'invalid_request'],
      [{ method: 'POST', url: `/admin/sessions/${Z}/review`, body: { decision: 'accept' } }, 404, 'session_not_found'],
      [{ method: 'POST', url: `/admin/chargers/${chargerId}/commands`, body: { action: 'Reset', payload: { type: 'Soft' } } }, 409, 'charger_offline'],
      [{ method: 'POST', url: `/admin/chargers/${Z}/commands`, body: { action: 'Reset' } }, 404, 'charger_not_found'],
      [{ method: 'GET', url: `/admin/chargers/${Z}/quarantine` }, 404, 'charger_not_found'],
      [{ method: 'POST', url: `/admin/chargers/${chargerId}/quarantine/1/replay` }, 404, 'not_found'],
      [{ method: 'PUT', url: `/admin/chargers/${chargerId}/id-tokens`, body: {} }, 400, 'invalid_request'],
      [{ method: 'PUT', url: `/admin/chargers/${chargerId}/ocmf-public-key`, body: { public_key: 'zz' } }, 400, 'invalid_public_key'],
      [{ method: 'PUT', url: `/admin/chargers/${chargerId}/registration`, body: {} }, 400, 'invalid_request'],
      [{ method: 'PUT', url: `/admin/chargers/${Z}/password`, body: { password: 'Abcdefghijklmnop1234' } }, 404, 'charger_not_found'],
      [{ method: 'POST', url: `/admin/chargers/${chargerId}/password/rotate`, body: {} }, 409, 'charger_offline'],
    ];
    for (const [req, status, error] of cases) await documented(svc, doc, { ...req, headers: ADMIN }, { status, error });

    const sale = await documented(svc, doc, { method: 'POST', url: '/admin/ere/sales', headers: ADMIN, body: { quarter: '2026-Q1', ere: 100, price_per_ere: '0.145' } }, { status: 201 });
    const saleId = sale.json!.sale_id as string;
    const allocate = (ere: number) => ({ method: 'POST' as const, url: `/admin/ere/sales/${saleId}/allocations`, headers: ADMIN, body: { account_id: accountId, ere } });
    await documented(svc, doc, allocate(3000), { status: 409, error: 'sale_exceeded' });
    await documented(svc, doc, allocate(1), { status: 409, error: 'insufficient_registered_ere' });
  });

  it('registerMyCharger names its codes and documents that a nickname needs a non-space character (item 3)', async () => {
    const me = bearer(owner.token);
    const post = (body: unknown) => ({ method: 'POST' as const, url: '/chargers', headers: me, body });
    await documented(svc, doc, post({ nickname: 'x', connection_type: 'ocpp', ocpp_identity: identity }), { status: 409, error: 'ocpp_identity_taken' });
    await documented(svc, doc, post({ nickname: 'x', connection_type: 'ocpp', account_id: Z }), { status: 404, error: 'account_not_found' });
    await documented(svc, doc, post({ nickname: '   ', connection_type: 'ocpp' }), { status: 400, error: 'invalid_request' });
    await documented(svc, doc, { method: 'POST', url: '/chargers', headers: me, raw: '{', type: 'application/json' }, { status: 400, error: 'invalid_json' });
    expect(bodyAccepted(doc, 'post', '/chargers', { nickname: '   ', connection_type: 'ocpp' })).toBe(false);
    expect(bodyAccepted(doc, 'post', '/chargers', { nickname: ' Garage ', connection_type: 'ocpp' })).toBe(true);
  });

  it('the sandbox helpers take no body and name their 400 codes (item 4)', async () => {
    const sign = `/sandbox/connections/${connectionId}/sign-mandate`;
    await documented(svc, doc, { method: 'POST', url: sign, headers: cpo, body: { full_name: 5 } }, { status: 400, error: 'invalid_request' });
    await documented(svc, doc, { method: 'POST', url: sign, headers: cpo, raw: '{', type: 'application/json' }, { status: 400, error: 'invalid_json' });
    await documented(svc, doc, { method: 'POST', url: sign, headers: cpo }, { status: 200 });
    await documented(svc, doc, { method: 'POST', url: '/sandbox/ean-recheck', headers: cpo }, { status: 200 });
    await documented(svc, doc, { method: 'POST', url: '/sandbox/ean-recheck', headers: cpo, body: [] }, { status: 400, error: 'invalid_request' });
    await documented(svc, doc, { method: 'POST', url: '/sandbox/ean-recheck', headers: cpo, raw: '{', type: 'application/json' }, { status: 400, error: 'invalid_json' });
    expect(doc.paths['/sandbox/connections/{connection_id}/sign-mandate'].post.requestBody.required).toBe(false);
    expect(doc.paths['/sandbox/ean-recheck'].post.requestBody.required).toBe(false);
  });

  it('createToken: invalid_json named, the fields the server requires marked required, no-store declared (items 5, 11)', async () => {
    await documented(svc, doc, { method: 'POST', url: '/oauth/token', raw: '{bad', type: 'application/json' }, { status: 400, error: 'invalid_json' });
    await documented(svc, doc, { method: 'POST', url: '/oauth/token', body: {} }, { status: 400, error: 'invalid_request' });
    const full = { grant_type: 'client_credentials', client_id: partner.clientId, client_secret: partner.clientSecret };
    const ok = await documented(svc, doc, { method: 'POST', url: '/oauth/token', body: full }, { status: 200 });
    expect(ok.headers['cache-control']).toBe('no-store');
    expect(Object.keys(ok.response.headers ?? {})).toContain('Cache-Control');
    expect(bodyAccepted(doc, 'post', '/oauth/token', {})).toBe(false);
    expect(bodyAccepted(doc, 'post', '/oauth/token', full)).toBe(true);
  });

  it('the Partner API names invalid_request; a row without name or email is documented as allowed (items 6, 13)', async () => {
    const key = bearer(partner.apiKey);
    const customers = (body: unknown) => ({ method: 'POST' as const, url: '/partner/customers', headers: key, body });
    const imports = (body: unknown) => ({ method: 'POST' as const, url: '/partner/drafts/import', headers: key, body });
    await documented(svc, doc, customers({ consent: true, send_invite: 1, customers: [{ name: 'A', email: 'a@ere-owner.nl' }] }), { status: 400, error: 'invalid_request' });
    await documented(svc, doc, imports({ consent: true, rows: 'x' }), { status: 400, error: 'invalid_request' });
    await documented(svc, doc, imports({ consent: true, csv: 5 }), { status: 400, error: 'invalid_request' });
    await documented(svc, doc, imports({ consent: true, send_invite: 1, csv: 'name,email\n' }), { status: 400, error: 'invalid_request' });
    const partial = { consent: true, send_invite: false, customers: [{ name: 'Only Name' }, { email: 'only-email@ere-owner.nl' }] };
    const res = await documented(svc, doc, customers(partial), { status: 200 });
    expect((res.json!.rejected as unknown[]).length).toBe(2);
    expect(bodyAccepted(doc, 'post', '/partner/customers', partial)).toBe(true);
  });

  it('a body in a media type the server does not read is 415 unsupported_media_type, documented (item 7)', async () => {
    const cases: Sent[] = [
      { method: 'POST', url: '/v1/accounts', headers: cpo, raw: 'a,b\n1,2\n', type: 'text/csv' },
      { method: 'POST', url: '/v1/connections:update', headers: cpo, raw: '<x/>', type: 'application/xml' },
      { method: 'POST', url: '/oauth/token', raw: '<x/>', type: 'application/xml' },
      { method: 'POST', url: '/partner/customers', headers: bearer(partner.apiKey), raw: 'name,email\n', type: 'text/csv' },
      { method: 'POST', url: '/chargers', headers: bearer(owner.token), raw: 'a', type: 'text/csv' },
      { method: 'POST', url: '/admin/partners', headers: ADMIN, raw: '<x/>', type: 'application/xml' },
      { method: 'POST', url: '/claim/unknown', raw: 'a', type: 'text/csv' },
      // D148: JSON sent as text/plain (fetch's default for a string body), and a form where the operation takes none
      { method: 'POST', url: '/v1/accounts', headers: cpo, raw: JSON.stringify({ person: { full_name: 'A' } }), type: 'text/plain;charset=UTF-8' },
      { method: 'POST', url: '/partner/customers', headers: bearer(partner.apiKey), raw: 'consent=true', type: 'application/x-www-form-urlencoded' },
      { method: 'POST', url: '/v1/sessions:batch', headers: cpo, raw: 'items=1', type: 'application/x-www-form-urlencoded' },
    ];
    for (const req of cases) await documented(svc, doc, req, { status: 415, error: 'unsupported_media_type' });
    expect(doc.info.description).toContain('415 `unsupported_media_type`');
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json)) {
        if ((op as Json).requestBody) expect((op as Json).responses['415'], `${method} ${path} documents 415`).toBeDefined();
        // D148: and 413, a body over the server's limit
        if ((op as Json).requestBody) expect(JSON.stringify((op as Json).responses['413']), `${method} ${path} documents 413`).toContain('payload_too_large');
      }
    }
    const big = JSON.stringify({ person: { full_name: 'x'.repeat(svc.config.HTTP_MAX_BODY_BYTES) } });
    await documented(svc, doc, { method: 'POST', url: '/v1/accounts', headers: cpo, raw: big, type: 'application/json' }, { status: 413, error: 'payload_too_large' });
    await documented(svc, doc, { method: 'POST', url: '/oauth/token', raw: big, type: 'application/json' }, { status: 413, error: 'payload_too_large' });
  });

  it('the signing and claim pages document the JSON answers they give (items 8, 9)', async () => {
    await documented(svc, doc, { method: 'GET', url: '/mandates/%ZZ' }, { status: 400, error: 'invalid_request' });
    await documented(svc, doc, { method: 'GET', url: '/mandates/unknown-token' }, { status: 404 });
    await documented(svc, doc, { method: 'POST', url: '/mandates/unknown-token', raw: '{bad', type: 'application/json' }, { status: 400, error: 'invalid_json' });
    await documented(svc, doc, { method: 'POST', url: '/mandates/%ZZ', raw: 'full_name=x', type: 'application/x-www-form-urlencoded' }, { status: 400, error: 'invalid_request' });
    await documented(svc, doc, { method: 'POST', url: '/claim/unknown', raw: '{bad', type: 'application/json' }, { status: 400, error: 'invalid_json' });
    await documented(svc, doc, { method: 'POST', url: '/claim/unknown', raw: 'street=Dorp', type: 'application/x-www-form-urlencoded' }, { status: 404 });
    await documented(svc, doc, { method: 'GET', url: '/claim/%ZZ' }, { status: 400, error: 'invalid_request' });
  });

  it('GET /readyz 503 names not_ready (item 14); GET /metrics 401 is JSON (METRICS_TOKEN set)', async () => {
    const startup = svc.deps.startup;
    const was = { ...startup };
    startup.complete = false;
    startup.step = 'test';
    try {
      await documented(svc, doc, { method: 'GET', url: '/readyz' }, { status: 503, error: 'not_ready' });
    } finally {
      Object.assign(startup, was);
    }
    await documented(svc, doc, { method: 'GET', url: '/readyz' }, { status: 200 });
    await documented(svc, doc, { method: 'GET', url: '/metrics' }, { status: 401, error: 'Missing or invalid API token' });
    const ok = await documented(svc, doc, { method: 'GET', url: '/metrics', headers: bearer(METRICS_TOKEN) }, { status: 200 });
    expect(ok.type).toBe('text/plain');
  });

  it('updateConnection takes numbers for the address fields as createAccount does (item 12)', async () => {
    const fresh = await anAccount(svc, partner); // unsigned: an address correction needs no acknowledgement
    const body = { connection_id: fresh.connection_id, connection: { street: 5, postal_code: 6, city: 7 } };
    await documented(svc, doc, { method: 'POST', url: '/v1/connections:update', headers: cpo, body }, { status: 200 });
    expect(bodyAccepted(doc, 'post', '/v1/connections:update', body)).toBe(true);
    expect(bodyAccepted(doc, 'post', '/v1/connections:update', { connection_id: connectionId, connection: { city: '  ' } })).toBe(false);
    const create = deref(doc, doc.paths['/v1/accounts'].post.requestBody.content['application/json'].schema) as Json;
    const update = deref(doc, doc.paths['/v1/connections:update'].post.requestBody.content['application/json'].schema) as Json;
    for (const f of ['street', 'house_number', 'postal_code', 'city']) {
      expect(update.properties.connection.properties[f], f).toEqual(create.properties.connection.properties[f]);
    }
  });

  it('names every code under the status the server gives it (src/http/errors.ts)', () => {
    const misplaced: string[] = [];
    for (const { method, path, op } of operations(doc)) {
      for (const [status, res] of Object.entries(op.responses as Json)) {
        for (const ex of Object.values(((res as Json).content?.['application/json']?.examples as Json) ?? {})) {
          const code = (ex as Json).value?.error as string;
          if (code in STATUS_BY_CODE && STATUS_BY_CODE[code] !== Number(status)) misplaced.push(`${method} ${path} ${status} ${code}`);
        }
      }
    }
    expect(misplaced).toEqual([]);
  });

  it('declares RateLimit and RateLimit-Policy on every response of a rate-limited operation (item 11)', async () => {
    const res = await documented(svc, doc, { method: 'GET', url: '/v1/accounts', headers: cpo }, { status: 200 });
    expect(res.headers['ratelimit']).toBeDefined();
    await documented(svc, doc, { method: 'GET', url: '/v1/accounts' }, { status: 401 });
  });
});

describe('rate-limited answers match /openapi.json', () => {
  let svc: TestService;
  let doc: Json;

  beforeAll(async () => {
    svc = await createTestService({ env: { RATE_LIMIT_ADMIN_FAIL_PER_MIN: '1', RATE_LIMIT_PUBLIC_PER_MIN: '2', STREAM_MAX_PER_TOKEN: '1' } });
    doc = await docOf(svc);
  });
  afterAll(() => svc?.close());

  it('admin operations document 429 for failed authentications, with the headers (item 2)', async () => {
    const wrong = bearer('wrong-admin-token');
    const first = await documented(svc, doc, { method: 'GET', url: '/admin/jobs', headers: wrong }, { status: 401 });
    expect(first.headers['ratelimit']).toBeDefined();
    const limited = await documented(svc, doc, { method: 'POST', url: '/admin/partners', headers: wrong, body: { name: 'x' } }, { status: 429, error: 'Too many requests' });
    expect(limited.headers['retry-after']).toBeDefined();
    await documented(svc, doc, { method: 'GET', url: '/admin/jobs', headers: ADMIN }, { status: 429, error: 'Too many requests' });
  });

  it('the signing page answers 429 as JSON, documented (item 8)', async () => {
    await svc.app.inject({ method: 'GET', url: '/mandates/unknown-token' });
    await svc.app.inject({ method: 'GET', url: '/mandates/unknown-token' });
    const get = await documented(svc, doc, { method: 'GET', url: '/mandates/unknown-token' }, { status: 429, error: 'Too many requests' });
    expect(get.headers['retry-after']).toBeDefined();
    await documented(svc, doc, { method: 'POST', url: '/mandates/unknown-token', raw: 'full_name=x', type: 'application/x-www-form-urlencoded' }, { status: 429, error: 'Too many requests' });
    await documented(svc, doc, { method: 'POST', url: '/claim/unknown', raw: 'street=x', type: 'application/x-www-form-urlencoded' }, { status: 429, error: 'Too many requests' });
  });

  it('a stream past the cap is 429 too_many_streams, named (item 10)', async () => {
    const user = await aUser(svc.deps, { scopes: ['chargers:read'] });
    const { id } = await svc.deps.db.selectFrom('personal_tokens').select('id').where('user_id', '=', user.userId).executeTakeFirstOrThrow();
    await sql`insert into charger_streams (token_id, expires_at) values (${id}, now() + interval '5 minutes')`.execute(svc.deps.db);
    await documented(svc, doc, { method: 'GET', url: '/chargers/stream', headers: bearer(user.token) }, { status: 429, error: 'too_many_streams' });
    const description = doc.paths['/chargers/stream'].get.responses['429'].description as string;
    expect(description).not.toContain('"');
  });
});
