// /openapi.json is good enough to generate a client from (issue 13 item 2): a valid OpenAPI 3.1 document (checked
// by @readme/openapi-parser, which validates against the 3.1 schema and checks what a schema cannot: unique
// operationIds, declared path parameters, resolvable $refs); every operation named, summarised, tagged and
// secured; every example valid against its own schema and accepted by the running API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validate } from '@readme/openapi-parser';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { registeredRoutes } from '../../src/http/app.ts';
import { OPERATION_IDS, openApiPath, TAGS } from '../../src/http/openapi-operations.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { deref, type Json, operations } from '../helpers/openapi-doc.ts';

/** Every example of the document with the schema it belongs to. */
function examples(doc: Json): Array<{ where: string; schema: unknown; value: unknown }> {
  const out: Array<{ where: string; schema: unknown; value: unknown }> = [];
  const walkSchema = (where: string, schema: Json | undefined) => {
    if (!schema || typeof schema !== 'object') return;
    for (const [i, v] of ((schema.examples as unknown[]) ?? []).entries()) out.push({ where: `${where} examples[${i}]`, schema, value: v });
    for (const [k, sub] of Object.entries((schema.properties as Json) ?? {})) walkSchema(`${where}.${k}`, sub);
    if (schema.items) walkSchema(`${where}[]`, schema.items);
  };
  const walkMedia = (where: string, media: Json) => {
    if ('example' in media) out.push({ where: `${where} example`, schema: media.schema, value: media.example });
    for (const [k, ex] of Object.entries((media.examples as Json) ?? {})) out.push({ where: `${where} examples.${k}`, schema: media.schema, value: (ex as Json).value });
    walkSchema(where, media.schema);
  };
  for (const { method, path, op } of operations(doc)) {
    for (const [type, media] of Object.entries((op.requestBody?.content as Json) ?? {})) walkMedia(`${method} ${path} body ${type}`, media as Json);
    for (const [status, res] of Object.entries((op.responses as Json) ?? {})) {
      for (const [type, media] of Object.entries(((res as Json).content as Json) ?? {})) walkMedia(`${method} ${path} ${status} ${type}`, media as Json);
    }
  }
  return out;
}

describe('/openapi.json', () => {
  let svc: TestService;
  let doc: Json;

  beforeAll(async () => {
    svc = await createTestService({ seed: true, listen: true });
    const res = await fetch(`${svc.url}/openapi.json`);
    expect(res.status).toBe(200);
    doc = (await res.json()) as Json;
  });
  afterAll(() => svc?.close());

  it('is a valid OpenAPI 3.1 document', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
  });

  it('names, summarises, tags and secures every operation; ids come from the table and are unique', () => {
    const ids = new Set<string>();
    const tagNames = TAGS.map((t) => t.name as string);
    for (const { method, path, op } of operations(doc)) {
      const key = `${method.toUpperCase()} ${path}`;
      expect(op.operationId, key).toBe(OPERATION_IDS[key]);
      expect(op.operationId).toMatch(/^[a-z][A-Za-z0-9]*$/);
      expect(ids.has(op.operationId), `${op.operationId} is unique`).toBe(false);
      ids.add(op.operationId);
      expect(op.summary, key).toEqual(expect.any(String));
      expect(op.tags?.length, key).toBe(1);
      expect(tagNames, key).toContain(op.tags[0]);
      expect(Array.isArray(op.security), `${key} states its security`).toBe(true);
    }
    // every route of the service is documented (the docs UI itself and /openapi.json are hidden)
    for (const r of registeredRoutes(svc.app)) {
      if (r.hidden || r.method === 'HEAD') continue;
      expect(doc.paths[openApiPath(r.url)]?.[r.method.toLowerCase()], `${r.method} ${r.url}`).toBeDefined();
      if (r.auth && !('public' in r.auth)) expect(doc.paths[openApiPath(r.url)][r.method.toLowerCase()].security.length).toBeGreaterThan(0);
    }
  });

  it('lists the tags in reading order: CPO API, Partner API, Personal API, sandbox; operations and admin last', () => {
    expect(doc.tags.map((t: Json) => t.name)).toEqual(['CPO API', 'Partner API', 'Personal API', 'Sandbox helpers', 'Signing page', 'Claim page', 'Operations', 'Admin']);
    expect(doc.paths['/oauth/token'].post.tags).toEqual(['CPO API']);
  });

  it('has the security schemes a client needs: CPO client credentials at the absolute token URL, bearer keys and tokens', () => {
    const s = doc.components.securitySchemes;
    expect(s.cpoToken.type).toBe('oauth2');
    expect(s.cpoToken.flows.clientCredentials.tokenUrl).toBe(`${svc.url}/oauth/token`);
    expect(s.partnerKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(s.personalToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.paths['/v1/accounts'].post.security).toEqual([{ cpoToken: ['cpo:accounts:write'] }]);
    expect(doc.paths['/partner/customers'].post.security).toEqual([{ partnerKey: [] }]);
    expect(doc.paths['/sessions'].get.security).toEqual([{ personalToken: ['chargers:read'] }]);
    expect(doc.servers).toEqual([{ url: svc.url }]);
  });

  it('names the OCPP endpoint with the configured host', () => {
    expect(doc.info.description).not.toContain(':///');
    expect(doc.info.description).toContain(`ws://${new URL(svc.url).host}/ocpp/{identity}`);
  });

  it('D193: names the OCPP endpoint with the path of PUBLIC_BASE_URL', async () => {
    const gw = await createTestService({ env: { PUBLIC_BASE_URL: 'https://ere.example.nl/gw' } });
    try {
      const d = (await gw.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { info: { description: string } };
      expect(d.info.description).toContain('`wss://ere.example.nl/gw/ocpp/{identity}`');
    } finally {
      await gw.close();
    }
  });

  it('D194: the introduction names the error shapes the specification fixes besides {error, detail}', () => {
    const d = doc.info.description as string;
    expect(d).not.toContain('Every error is');
    expect(d).toContain('401 `{"error": "Missing or invalid API token"}`');
    expect(d).toContain('403 `{"error": "Insufficient scope", "required_scope", "detail"}`');
    expect(d).toContain('`{"error": "partner_api_key_scope"}`');
    expect(d).toContain('429 `{"error": "Too many requests", "retry_after_seconds"}`');
  });

  it('documents the push stream as text/event-stream, not JSON', () => {
    const ok = doc.paths['/chargers/stream'].get.responses['200'];
    expect(Object.keys(ok.content)).toEqual(['text/event-stream']);
    expect(ok.content['text/event-stream'].schema.type).toBe('string');
  });

  it('lists the values of the fields that take one of a few (a generated client gets a union, not a bare string)', () => {
    const listed = deref(doc, doc.paths['/v1/accounts'].get.responses['200'].content['application/json'].schema) as Json;
    expect(listed.properties.accounts.items.properties.access_channel.enum).toEqual(['cpo_api']);
    const chargers = deref(doc, doc.paths['/chargers'].get.responses['200'].content['application/json'].schema) as Json;
    const item = chargers.properties.chargers.items.properties;
    expect(item.connection_type.enum).toEqual(['ocpp', 'cloud_api']);
    expect(item.status.enum).toEqual(['online', 'offline']);
    const sessions = deref(doc, doc.paths['/sessions'].get.responses['200'].content['application/json'].schema) as Json;
    expect(sessions.properties.sessions.items.properties.status.enum).toEqual(['active', 'completed']);
    // D158: a batch item's rejection codes (C2.4, C6.4), each described
    const batch = deref(doc, doc.paths['/v1/sessions:batch'].post.responses['200'].content['application/json'].schema) as Json;
    const error = deref(doc, batch.properties.results.items) as Json;
    const codes = ['target_required', 'connection_not_found', 'connection_not_active', 'ambiguous_connection', 'invalid_month', 'month_in_future', 'invalid_kwh', 'ere_booked', 'invalid_request'];
    expect(error.properties.error.enum).toEqual(codes);
    for (const c of codes) expect(error.properties.error.description).toContain(c);
  });

  it('types the CPO request bodies (no field left untyped)', () => {
    const body = (path: string) => deref(doc, doc.paths[path].post.requestBody.content['application/json'].schema) as Json;
    const untyped = (schema: Json, at: string): string[] =>
      Object.entries((schema.properties as Json) ?? {}).flatMap(([k, v]) => {
        const s = v as Json;
        const here = `${at}.${k}`;
        if (!s.type && !s.anyOf && !s.allOf && !s.enum && !s.const) return [here];
        return [...untyped(s, here), ...(s.items ? untyped(s.items, `${here}[]`) : [])];
      });
    for (const path of ['/v1/accounts', '/v1/chargers', '/v1/sessions:batch', '/v1/mandate-links', '/v1/connections:update']) {
      expect(untyped(body(path), path)).toEqual([]);
    }
    const item = body('/v1/sessions:batch').properties.items.items;
    expect(item.properties.kwh.type).toBe('number');
    expect(item.properties.month.pattern).toBeDefined();
  });

  it('documents every error response with the one ErrorBody schema and its error strings', () => {
    expect(doc.components.schemas.ErrorBody.required).toEqual(['error']);
    for (const { method, path, op } of operations(doc)) {
      for (const [status, res] of Object.entries(op.responses as Json)) {
        const media = (res as Json).content?.['application/json'];
        if (Number(status) < 400 || !media) continue;
        const ref = media.schema.$ref ?? media.schema.allOf?.[0]?.$ref;
        expect(ref, `${method} ${path} ${status}`).toBe('#/components/schemas/ErrorBody');
      }
    }
    const codes = (path: string, method: string, status: string) =>
      Object.values(doc.paths[path][method].responses[status].content['application/json'].examples as Json).map((e) => (e as Json).value.error);
    expect(codes('/v1/accounts', 'post', '400')).toEqual(expect.arrayContaining(['invalid_type', 'invalid_payout_handler', 'invalid_iban', 'person_required', 'invalid_ean', 'address_required']));
    // D227: a missing credential (no detail) and a credential of another kind (the detail names the route's)
    expect(codes('/v1/accounts', 'post', '401')).toEqual(['Missing or invalid API token', 'Missing or invalid API token']);
    // D239: a partner key on a scoped route hears Insufficient scope (auth.ts; its own example), never
    // partner_api_key_scope, which is not listed there
    expect(codes('/v1/accounts', 'post', '403')).toEqual(['Insufficient scope', 'Insufficient scope']);
    expect(codes('/partner/customers', 'post', '403')).not.toContain('partner_api_key_scope');
    expect(doc.paths['/v1/accounts'].post.responses['403'].content['application/json'].examples.Insufficient_scope.value.required_scope).toBe('cpo:accounts:write');
    expect(codes('/v1/catalog/chargers', 'get', '403')).toEqual(['partner_api_key_scope']);
    expect(codes('/v1/accounts', 'post', '429')).toEqual(['Too many requests']);
    expect(codes('/v1/chargers', 'post', '422')).toEqual(['catalog_not_mid', 'catalog_unresolved', 'charger_limit']);
    expect(codes('/partner/customers', 'post', '400')).toEqual(expect.arrayContaining(['consent_required', 'customers must be a non-empty array of { name, email }']));
    expect(codes('/oauth/token', 'post', '401')).toEqual(['invalid_client']);
    // a capacity hold blocks the registration of a month: 409 energy_held on both doors that register one
    // and a month that ended before the machtiging came into force: 409 month_not_covered on both (D149)
    expect(codes('/admin/energy-months/{id}/review', 'post', '409')).toEqual(['invalid_transition', 'energy_held', 'account_not_eligible', 'month_not_covered']);
    expect(codes('/sandbox/connections/{connection_id}/register-ere', 'post', '409')).toEqual(['invalid_transition', 'energy_held', 'month_not_covered']);
    expect(codes('/sandbox/connections/{connection_id}/register-ere', 'post', '400')).toContain('invalid_month');
  });

  it('has examples that validate against their own schemas, with a valid Dutch EAN and numbers as numbers', () => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    const all = examples(doc);
    expect(all.length).toBeGreaterThan(40);
    for (const { where, schema, value } of all) {
      const check = ajv.compile(deref(doc, schema) as object);
      expect(check(value), `${where}: ${JSON.stringify(check.errors)}`).toBe(true);
    }
    const text = JSON.stringify(doc);
    expect(text).not.toMatch(/"kwh":"/);
    const account = doc.paths['/v1/accounts'].post.requestBody.content['application/json'].example;
    expect(account.connection.ean_code).toMatch(/^871\d{15}$/);
  });

  it('every request-body example is accepted by the API (no 400, no 5xx)', async () => {
    const demo = svc.demo!;
    const tokenRes = await fetch(`${svc.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: demo.partner.cpo_client.client_id, client_secret: demo.partner.cpo_client.client_secret }),
    });
    const cpo = ((await tokenRes.json()) as Json).access_token as string;
    const credential: Record<string, string> = { cpoToken: cpo, partnerKey: demo.partner.api_key, personalToken: demo.user.token, adminToken: TEST_ADMIN_TOKEN };
    let sent = 0;
    // in document order: the account the later examples name is created first
    for (const { method, path, op } of operations(doc)) {
      const media = op.requestBody?.content?.['application/json'];
      const bodies = media ? ['example' in media ? media.example : undefined, ...((media.schema?.examples as unknown[]) ?? [])].filter((b) => b !== undefined) : [];
      for (const body of bodies) {
        const scheme = Object.keys(op.security?.[0] ?? {})[0];
        const url = svc.url + path.replace(/\{[^}]+\}/g, '3f6c2a4e-8b1d-4c7e-9a2f-5d0e1b7c9a31');
        const res = await fetch(url, {
          method: method.toUpperCase(),
          headers: { 'content-type': 'application/json', ...(scheme ? { authorization: `Bearer ${credential[scheme]}` } : {}) },
          body: JSON.stringify(body),
        });
        const answer = await res.text();
        expect(res.status, `${method} ${path}: ${answer}`).not.toBe(400);
        expect(res.status, `${method} ${path}: ${answer}`).toBeLessThan(500);
        if (path !== '/oauth/token') expect(res.status, `${method} ${path}: ${answer}`).not.toBe(401);
        sent++;
      }
    }
    expect(sent).toBeGreaterThanOrEqual(10);
  });
});

describe('/openapi.json follows what is switched on', () => {
  it('leaves out the admin API without ADMIN_TOKEN and the sandbox helpers on production', async () => {
    const prod = await createTestService({ env: { APP_ENV: 'production', ADMIN_TOKEN: undefined } });
    try {
      const doc = (await prod.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Json;
      const paths = Object.keys(doc.paths);
      expect(paths.filter((p) => p.startsWith('/admin') || p.startsWith('/sandbox'))).toEqual([]);
      expect(doc.tags.map((t: Json) => t.name)).not.toContain('Admin');
      expect(doc.tags.map((t: Json) => t.name)).not.toContain('Sandbox helpers');
      expect(doc.components.securitySchemes).not.toHaveProperty('adminToken');
      expect(doc.info.description).not.toContain('/sandbox');
      expect((await validate(structuredClone(doc) as never)).valid).toBe(true);
    } finally {
      await prod.close();
    }
  });
});
