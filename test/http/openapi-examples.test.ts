// D227: every error example of /openapi.json is a body the service sends. An outside audit generated a client from
// the document and found 401 examples naming a CPO token on Partner and Personal routes, `consent_required` with a
// `detail` the service never sends, 49 placeholders ("The request was refused: <code>.") and invalid_request examples
// naming `query.limit` on operations without a query. The strongest check is the audit's own: requests that trigger
// a code, from the outside, and the example the document shows for that code on that operation, compared.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aPartner, aUser, bearer, type TestPartner } from '../helpers/factories.ts';
import { type Json, operations } from '../helpers/openapi-doc.ts';

const METRICS_TOKEN = 'metrics-token-0123456789';
const ADMIN = bearer(TEST_ADMIN_TOKEN);
const Z = '00000000-0000-4000-8000-000000000000';
const UUID_RE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** A body with its ids (and the request id of a 5xx) made alike, as an example's ids stand for any. */
const alike = (v: unknown): unknown => JSON.parse(JSON.stringify(v).replace(UUID_RE, '<id>'));

interface Case {
  /** the operation's path in the document */
  path: string;
  method: 'GET' | 'POST' | 'PUT';
  url?: string;
  headers?: Record<string, string>;
  body?: unknown;
  raw?: { payload: string; type: string };
  status: number;
  error: string;
}

function errorExamplesOf(doc: Json, path: string, method: string, status: number): Json[] {
  const res = doc.paths[path]?.[method.toLowerCase()]?.responses?.[String(status)];
  return Object.values((res?.content?.['application/json']?.examples as Json) ?? {}).map((e) => (e as Json).value as Json);
}

describe('the error examples of /openapi.json are what the service answers (D227)', () => {
  let svc: TestService;
  let doc: Json;
  let partner: TestPartner;
  let cpo: Record<string, string>;
  let owner: { userId: string; token: string };

  beforeAll(async () => {
    svc = await createTestService({ seed: true, env: { METRICS_TOKEN } });
    doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Json;
    partner = await aPartner(svc.deps);
    cpo = bearer(await partner.cpoToken());
    owner = await aUser(svc.deps);
  });
  afterAll(() => svc?.close());

  /** Sends the request and asserts that the document shows its answer as the example of its code there. */
  async function answersAsDocumented(c: Case): Promise<Json> {
    const headers: Record<string, string> = { ...(c.headers ?? {}) };
    let payload: string | undefined;
    if (c.raw) {
      payload = c.raw.payload;
      headers['content-type'] = c.raw.type;
    } else if (c.body !== undefined) {
      payload = JSON.stringify(c.body);
      headers['content-type'] = 'application/json';
    }
    const res = await svc.app.inject({ method: c.method, url: c.url ?? c.path, headers, ...(payload !== undefined ? { payload } : {}) });
    const what = `${c.method} ${c.url ?? c.path} → ${res.statusCode} ${res.body.slice(0, 300)}`;
    expect(res.statusCode, what).toBe(c.status);
    const body = res.json() as Json;
    expect(body.error, what).toBe(c.error);
    const shown = errorExamplesOf(doc, c.path, c.method, c.status).filter((v) => v.error === c.error);
    expect(shown.length, `${what}: the document has an example of ${c.error}`).toBeGreaterThan(0);
    expect(shown.map(alike), `${what}: one of the document's examples is this answer`).toContainEqual(alike(body));
    return body;
  }

  it('a 401 example of each route family is the answer to a missing or a wrong credential there (F1)', async () => {
    const personal = bearer(owner.token);
    const cases: Case[] = [
      // CPO routes: nothing, then a personal token
      { path: '/v1/accounts', method: 'GET', status: 401, error: 'Missing or invalid API token' },
      { path: '/v1/accounts', method: 'GET', headers: bearer('garbage-token'), status: 401, error: 'Missing or invalid API token' },
      { path: '/v1/accounts', method: 'POST', headers: personal, body: {}, status: 401, error: 'Missing or invalid API token' },
      // Partner routes: a CPO token, a personal token is named the same way, a production key on the sandbox
      { path: '/partner/customers', method: 'POST', headers: cpo, body: {}, status: 401, error: 'Missing or invalid API token' },
      { path: '/partner/drafts/import', method: 'POST', status: 401, error: 'Missing or invalid API token' },
      { path: '/partner/customers', method: 'POST', headers: bearer('pk_live_0123456789abcdef'), body: {}, status: 401, error: 'Missing or invalid API token' },
      // Personal routes
      { path: '/chargers', method: 'GET', headers: cpo, status: 401, error: 'Missing or invalid API token' },
      { path: '/chargers/stream', method: 'GET', headers: cpo, status: 401, error: 'Missing or invalid API token' },
      { path: '/ere-position', method: 'GET', headers: cpo, status: 401, error: 'Missing or invalid API token' },
      { path: '/chargers', method: 'POST', headers: cpo, body: {}, status: 401, error: 'Missing or invalid API token' },
      // the sandbox helpers take a CPO token or a partner key
      { path: '/sandbox/ean-recheck', method: 'POST', headers: personal, status: 401, error: 'Missing or invalid API token' },
      // the admin API and /metrics
      { path: '/admin/jobs', method: 'GET', headers: bearer('wrong-admin-token'), status: 401, error: 'Missing or invalid API token' },
      { path: '/metrics', method: 'GET', status: 401, error: 'Missing or invalid API token' },
    ];
    for (const c of cases) await answersAsDocumented(c);
  });

  it('the 401 examples name only the credential of their route family, and the description says when detail is present (F1)', () => {
    const taken: Record<string, RegExp> = {
      cpoToken: /^This route takes a CPO access token/,
      partnerKey: /^(This route takes a partner API key;|Unknown partner API key\. pk_live_…)/,
      personalToken: /^This route takes a personal API token;/,
    };
    for (const { method, path, op } of operations(doc)) {
      const res = op.responses['401'];
      if (!res) continue;
      const where = `${method} ${path}`;
      const values = errorExamplesOf(doc, path, method, 401);
      if (!values.some((v) => v.error === 'Missing or invalid API token')) continue; // the token endpoint's invalid_client
      const details = values.map((v) => v.detail).filter((d) => d !== undefined) as string[];
      const schemes = ((op.security ?? []) as Json[]).map((s) => Object.keys(s)[0]!);
      if (path === '/metrics') {
        expect(details, where).toEqual(['GET /metrics requires Authorization: Bearer <METRICS_TOKEN>.']);
        continue;
      }
      // a missing credential: no detail, on every route behind one
      expect(values, where).toContainEqual({ error: 'Missing or invalid API token' });
      if (schemes.includes('adminToken')) {
        expect(details, where).toEqual([]);
        expect(res.description, where).toContain('no detail');
        continue;
      }
      expect(res.description, where).toContain('no detail for a missing, unknown, expired or revoked credential');
      for (const d of details) {
        expect(schemes.some((s) => taken[s]?.test(d)), `${where}: ${d}`).toBe(true);
        if (!schemes.includes('cpoToken')) expect(d, where).not.toContain('CPO access token (OAuth');
      }
      if (schemes.includes('partnerKey')) expect(details.some((d) => d.includes('production host')), `${where} shows the wrong-host 401`).toBe(true);
    }
  });

  it('consent_required shows `message`, as the service sends it (F2)', async () => {
    const key = bearer(partner.apiKey);
    const body = await answersAsDocumented({
      path: '/partner/customers', method: 'POST', headers: key, body: { customers: [{ name: 'A', email: 'a@klant.nl' }] }, status: 400, error: 'consent_required',
    });
    expect(body).not.toHaveProperty('detail');
    await answersAsDocumented({ path: '/partner/drafts/import', method: 'POST', headers: key, body: { csv: 'name,email\n' }, status: 400, error: 'consent_required' });
    for (const path of ['/partner/customers', '/partner/drafts/import']) {
      const [shown] = errorExamplesOf(doc, path, 'post', 400).filter((v) => v.error === 'consent_required');
      expect(Object.keys(shown!).sort(), path).toEqual(['error', 'message']);
    }
  });

  it('no example is a placeholder; every coded example carries the text it is sent with (F3)', () => {
    const placeholders: string[] = [];
    const bare: string[] = [];
    // the bodies C6.1 and the spec fix without a detail
    const withoutDetail = new Set(['Missing or invalid API token', 'Too many requests', 'Authentication is temporarily unavailable, try again shortly',
      'No partner is linked to this API key', 'customers must be a non-empty array of { name, email }', 'consent_required']);
    for (const { method, path, op } of operations(doc)) {
      for (const status of Object.keys(op.responses as Json)) {
        for (const v of errorExamplesOf(doc, path, method, Number(status))) {
          if (typeof v.detail === 'string' && /^The request was refused/.test(v.detail)) placeholders.push(`${method} ${path} ${status} ${v.error}`);
          if (v.detail === undefined && !withoutDetail.has(v.error)) bare.push(`${method} ${path} ${status} ${v.error}`);
        }
      }
    }
    expect(placeholders).toEqual([]);
    expect(bare).toEqual([]);
  });

  it('invalid_request names a body field on body operations and a query parameter on query operations, never `query.` (F3)', () => {
    for (const { method, path, op } of operations(doc)) {
      const [shown] = errorExamplesOf(doc, path, method, 400).filter((v) => v.error === 'invalid_request');
      if (!shown) continue;
      const where = `${method} ${path}: ${shown.detail}`;
      expect(shown.detail, where).not.toMatch(/(^|; )query\./);
      const query = ((op.parameters ?? []) as Json[]).some((p) => p.in === 'query');
      const inPath = ((op.parameters ?? []) as Json[]).some((p) => p.in === 'path');
      if (op.requestBody?.content?.['application/json'] && !query) expect(shown.detail, where).not.toMatch(/^(querystring|params)\./);
      if (!op.requestBody && query && !inPath) expect(shown.detail, where).toMatch(/^querystring\./);
    }
  });

  it('422 catalog_unresolved of POST /v1/chargers documents suggestions, and its example is the answer (F3)', async () => {
    const schema = doc.paths['/v1/chargers'].post.responses['422'].content['application/json'].schema as Json;
    const extra = (schema.allOf as Json[] | undefined)?.[1]?.properties?.suggestions as Json | undefined;
    expect(extra?.type).toBe('array');
    expect(Object.keys(extra!.items.properties).sort()).toEqual(['brand', 'catalog_charger_id', 'model']);
    const { account_id } = (await svc.app.inject({ method: 'POST', url: '/v1/accounts', headers: cpo, payload: accountBody('EX-CATALOG', '871685900000000103') })).json() as Json;
    const charger = (body: Json): Case => ({ path: '/v1/chargers', method: 'POST', headers: cpo, body: { account_id, ...body }, status: 422, error: 'catalog_unresolved' });
    const unresolved = await answersAsDocumented(charger({ ocpp_vendor: 'Webasto', ocpp_model: 'Live' }));
    expect(unresolved.suggestions).toHaveLength(1);
    await answersAsDocumented({ ...charger({ ocpp_vendor: 'KEBA', ocpp_model: 'KC-P30-EC2401B2-E0R' }), error: 'catalog_not_mid' });
  });

  /** A POST /v1/accounts body the sandbox takes (an 18-digit EAN of the caller's choosing). */
  function accountBody(ref: string, ean: string): Json {
    const example = structuredClone(doc.paths['/v1/accounts'].post.requestBody.content['application/json'].example) as Json;
    return { ...example, cpo_external_ref: ref, connection: { ...example.connection, ean_code: ean } };
  }

  it('the CPO API: each code the audit could trigger answers as its example (F3)', async () => {
    const example = doc.paths['/v1/accounts'].post.requestBody.content['application/json'].example as Json;
    const created = (await svc.app.inject({ method: 'POST', url: '/v1/accounts', headers: cpo, payload: { ...example, cpo_external_ref: 'EX-1' } })).json() as Json;
    const account = (o: Json): Case => ({ path: '/v1/accounts', method: 'POST', headers: cpo, body: { ...example, cpo_external_ref: 'EX-2', ...o }, status: 400, error: '' });
    const conn = (o: Json) => ({ ...example.connection, ...o });
    const cases: Case[] = [
      { ...account({}), status: 409, error: 'ean_in_use' },
      { ...account({ type: 'bedrijf' }), error: 'invalid_type' },
      { ...account({ payout_handler: 'x' }), error: 'invalid_payout_handler' },
      { ...account({ iban: 'NL12' }), error: 'invalid_iban' },
      { ...account({ person: { full_name: ' ' } }), error: 'person_required' },
      { ...account({ connection: conn({ ean_code: '87168590001234567' }) }), error: 'invalid_ean' },
      { ...account({ connection: conn({ city: undefined }) }), error: 'address_required' },
      { ...account({ display_name: 5 }), error: 'invalid_request' },
      { path: '/v1/accounts', method: 'POST', headers: cpo, raw: { payload: '{', type: 'application/json' }, status: 400, error: 'invalid_json' },
      { path: '/v1/accounts', method: 'POST', headers: cpo, raw: { payload: 'a,b', type: 'text/csv' }, status: 415, error: 'unsupported_media_type' },
      { path: '/v1/accounts', method: 'GET', url: '/v1/accounts?limit=1000000', headers: cpo, status: 400, error: 'invalid_request' },
      { path: '/v1/ere-positions', method: 'GET', url: '/v1/ere-positions?limit=1000000', headers: cpo, status: 400, error: 'invalid_request' },
      // connections:update and mandate links
      { path: '/v1/connections:update', method: 'POST', headers: cpo, body: {}, status: 400, error: 'target_required' },
      { path: '/v1/connections:update', method: 'POST', headers: cpo, body: { connection_id: Z }, status: 404, error: 'connection_not_found' },
      { path: '/v1/connections:update', method: 'POST', headers: cpo, body: { connection_id: created.connection_id, acknowledge_mandate_lapses: 'yes' }, status: 400, error: 'invalid_request' },
      { path: '/v1/connections:update', method: 'POST', headers: cpo, body: { connection_id: created.connection_id, connection: { city: ' ' } }, status: 400, error: 'address_required' },
      { path: '/v1/mandate-links', method: 'POST', headers: cpo, body: { connection_id: Z }, status: 404, error: 'connection_not_found' },
      // chargers
      { path: '/v1/chargers', method: 'POST', headers: cpo, body: { account_id: 'x', ocpp_vendor: 'A', ocpp_model: 'B' }, status: 400, error: 'invalid_account_id' },
      { path: '/v1/chargers', method: 'POST', headers: cpo, body: { account_id: created.account_id, catalog_charger_id: 5 }, status: 400, error: 'invalid_catalog_charger_id' },
      { path: '/v1/chargers', method: 'POST', headers: cpo, body: { account_id: created.account_id }, status: 400, error: 'vendor_and_model_required' },
      { path: '/v1/chargers', method: 'POST', headers: cpo, body: { account_id: Z, catalog_charger_id: Z }, status: 404, error: 'account_not_found' },
      { path: '/v1/chargers', method: 'POST', headers: cpo, body: { account_id: created.account_id, catalog_charger_id: Z }, status: 404, error: 'catalog_not_found' },
      // the token endpoint
      { path: '/oauth/token', method: 'POST', body: { grant_type: 'password', client_id: 'x', client_secret: 'y' }, status: 400, error: 'unsupported_grant_type' },
      { path: '/oauth/token', method: 'POST', body: { grant_type: 'client_credentials', client_id: partner.clientId, client_secret: 'wrong' }, status: 401, error: 'invalid_client' },
      // the sandbox helpers
      { path: '/sandbox/connections/{connection_id}/sign-mandate', method: 'POST', url: `/sandbox/connections/${Z}/sign-mandate`, headers: cpo, status: 404, error: 'connection_not_found' },
      { path: '/sandbox/connections/{connection_id}/register-ere', method: 'POST', url: `/sandbox/connections/${Z}/register-ere`, headers: cpo, body: { month: '2026-10' }, status: 404, error: 'connection_not_found' },
    ];
    for (const c of cases) await answersAsDocumented(c);

    const reader = await aPartner(svc.deps, { scopes: ['cpo:accounts:read'] });
    await answersAsDocumented({
      path: '/oauth/token', method: 'POST', body: { grant_type: 'client_credentials', client_id: reader.clientId, client_secret: reader.clientSecret, scope: 'cpo:sessions:write' }, status: 400, error: 'invalid_scope',
    });
    // a signed machtiging: signing again, and a correction without the acknowledgement
    const sign = { path: '/sandbox/connections/{connection_id}/sign-mandate', method: 'POST' as const, url: `/sandbox/connections/${created.connection_id}/sign-mandate`, headers: cpo };
    expect((await svc.app.inject({ method: 'POST', url: sign.url, headers: cpo })).statusCode).toBe(200);
    await answersAsDocumented({ ...sign, status: 409, error: 'mandate_already_active' });
    await answersAsDocumented({ path: '/v1/mandate-links', method: 'POST', headers: cpo, body: { connection_id: created.connection_id }, status: 409, error: 'mandate_already_active' });
    await answersAsDocumented({ path: '/v1/connections:update', method: 'POST', headers: cpo, body: { connection_id: created.connection_id, connection: { city: 'Zwolle' } }, status: 409, error: 'mandate_signed' });
    // a second charger without a serial number
    const first = await svc.app.inject({ method: 'POST', url: '/v1/chargers', headers: cpo, payload: { account_id: created.account_id, ocpp_vendor: 'Webasto', ocpp_model: 'Unite' } });
    expect(first.statusCode, first.body).toBe(201);
    await answersAsDocumented({ path: '/v1/chargers', method: 'POST', headers: cpo, body: { account_id: created.account_id, ocpp_vendor: 'Webasto', ocpp_model: 'Unite' }, status: 409, error: 'serial_required' });
  });

  it('the Partner, Personal and admin APIs: their codes answer as their examples (F3)', async () => {
    const key = bearer(partner.apiKey);
    const me = bearer(owner.token);
    const readOnly = await aUser(svc.deps, { scopes: ['chargers:write'] });
    const cases: Case[] = [
      { path: '/partner/customers', method: 'POST', headers: key, body: { consent: true, send_invite: 1, customers: [{ name: 'A', email: 'a@klant.nl' }] }, status: 400, error: 'invalid_request' },
      { path: '/partner/customers', method: 'POST', headers: key, body: { consent: true, customers: [] }, status: 400, error: 'customers must be a non-empty array of { name, email }' },
      { path: '/partner/drafts/import', method: 'POST', headers: key, body: { consent: true, rows: 'x' }, status: 400, error: 'invalid_request' },
      { path: '/v1/catalog/chargers', method: 'GET', headers: key, status: 403, error: 'partner_api_key_scope' },
      { path: '/admin/jobs', method: 'GET', headers: key, status: 403, error: 'partner_api_key_scope' },
      // D239: a partner key on a scoped route hears Insufficient scope, the only 403 documented there
      { path: '/sessions', method: 'GET', headers: key, status: 403, error: 'Insufficient scope' },
      { path: '/v1/accounts', method: 'POST', headers: key, body: {}, status: 403, error: 'Insufficient scope' },
      { path: '/chargers', method: 'GET', headers: bearer(readOnly.token), status: 403, error: 'Insufficient scope' },
      { path: '/chargers', method: 'POST', headers: me, body: { nickname: 'Oprit', connection_type: 'ocpp', account_id: Z }, status: 404, error: 'account_not_found' },
      { path: '/chargers', method: 'POST', headers: me, body: {}, status: 400, error: 'invalid_request' },
      { path: '/sessions', method: 'GET', url: '/sessions?limit=1000000', headers: me, status: 400, error: 'invalid_request' },
      { path: '/admin/chargers/{charger_id}/quarantine', method: 'GET', url: `/admin/chargers/${Z}/quarantine`, headers: ADMIN, status: 404, error: 'charger_not_found' },
      { path: '/admin/users/{user_id}/api-tokens', method: 'POST', url: `/admin/users/${Z}/api-tokens`, headers: ADMIN, body: { scopes: ['chargers:read'] }, status: 404, error: 'user_not_found' },
      { path: '/admin/partners/{partner_id}/cpo-clients', method: 'POST', url: `/admin/partners/${Z}/cpo-clients`, headers: ADMIN, body: {}, status: 404, error: 'partner_not_found' },
      { path: '/admin/partners', method: 'POST', headers: ADMIN, body: {}, status: 400, error: 'invalid_request' },
      { path: '/admin/chargers/{charger_id}/commands', method: 'POST', url: `/admin/chargers/${svc.demo!.charger.charger_id}/commands`, headers: ADMIN, body: { action: 'Reset', payload: { type: 'Soft' } }, status: 409, error: 'charger_offline' },
      { path: '/admin/chargers/{charger_id}/ocmf-public-key', method: 'PUT', url: `/admin/chargers/${svc.demo!.charger.charger_id}/ocmf-public-key`, headers: ADMIN, body: { public_key: 'zz' }, status: 400, error: 'invalid_public_key' },
    ];
    for (const c of cases) await answersAsDocumented(c);
    // an OCPP identity registered twice
    const register = { path: '/chargers', method: 'POST' as const, headers: me, body: { nickname: 'Oprit', connection_type: 'ocpp', ocpp_identity: 'ALFEN-0042' } };
    expect((await svc.app.inject({ method: 'POST', url: '/chargers', headers: me, payload: register.body })).statusCode).toBe(201);
    await answersAsDocumented({ ...register, status: 409, error: 'ocpp_identity_taken' });
    // a body over the limit
    await answersAsDocumented({
      path: '/v1/accounts', method: 'POST', headers: cpo, raw: { payload: JSON.stringify({ x: 'x'.repeat(svc.config.HTTP_MAX_BODY_BYTES) }), type: 'application/json' }, status: 413, error: 'payload_too_large',
    });
  });
});

describe('the wrong-host 401 on production (D227)', () => {
  let svc: TestService;
  afterAll(() => svc?.close());

  it('a sandbox key on the production host answers as the Partner API example says', async () => {
    svc = await createTestService({ env: { APP_ENV: 'production' } });
    const doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Json;
    const res = await svc.app.inject({ method: 'POST', url: '/partner/customers', headers: bearer('pk_test_0123456789abcdef'), payload: {} });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toHaveProperty('detail');
    expect(errorExamplesOf(doc, '/partner/customers', 'post', 401)).toContainEqual(res.json());
  });
});
