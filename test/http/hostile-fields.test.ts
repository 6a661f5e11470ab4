// Every documented operation, field by field: each request-body example of /openapi.json sent with one field (or the
// body itself) replaced by a hostile value, and each documented query and path parameter given hostile text, with
// the operation's own credential, as a CPO engineer's generated client or a careless integration would send them.
// No answer may be a 5xx, every answer's status must be one the operation documents, and every JSON error has the
// {error, detail} shape. Found this way: a kWh of 1e21 in POST /v1/sessions:batch failed the whole batch with a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aPartner, bearer } from '../helpers/factories.ts';
import { anAccount, anEan } from '../helpers/onboarding-factories.ts';
import { fieldPaths, withField } from '../helpers/field-mutations.ts';
import { deref, type Json, operations } from '../helpers/openapi-doc.ts';


/** Values no field expects: control characters, sizes, number edges, wrong types, prototype names. */
const HOSTILE_VALUES: unknown[] = [undefined /* the field left out */, 'a\u0000b', '', ' ', 'x'.repeat(5000), '\ud800', '🔌', -1, 0, 2 ** 31, 2 ** 53 - 1, 1e21, 1.7e308, 2.5, 2 ** 63, null, true, [], {}, ['x'], { a: 1 }, '2026-13-45', '-1', '1e999', '__proto__'];
/** The same as URL text (percent-encoded where a URL needs it). */
const HOSTILE_TEXT = ['a%00b', '', '%20', 'x'.repeat(1000), '%ED%A0%80', '%F0%9F%94%8C', '-1', '0', '2147483648', '9007199254740991', '1e21', '2.5', '9223372036854775808', 'null', 'true', '%5B%5D', '2026-13-45', '2026-02-30', '1e999', '__proto__', '%zz', 'NaN'];
/** Answers from the server's own bounds, the same for every route (C1.5 limits, C4.12 URL length). */
const SERVER_WIDE = new Set([414, 429]);

/** A plausible value of a JSON schema, for bodies the document gives no example of (the admin API's). */
function sampleOf(schema: Json | undefined): unknown {
  if (!schema) return null;
  if ('const' in schema) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.examples?.length) return schema.examples[0];
  const alt = schema.anyOf ?? schema.oneOf;
  if (alt) return sampleOf(alt.find((x: Json) => x.type !== 'null') ?? alt[0]);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries((schema.properties as Json) ?? {}).map(([k, v]) => [k, sampleOf(v as Json)]));
    case 'array':
      return [sampleOf(schema.items)];
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'string':
      return ({ uuid: '3f6c2a4e-8b1d-4c7e-9a2f-5d0e1b7c9a31', email: 'owner@ere-owner.nl', date: '2026-10-01', 'date-time': '2026-10-01T12:00:00Z' } as Json)[schema.format] ?? 'text';
    default:
      return null;
  }
}

describe('hostile values in every documented field', () => {
  let svc: TestService;
  let doc: Json;
  let credential: Record<string, string>;
  let ids: Record<string, string>;
  const ANY_ID = '3f6c2a4e-8b1d-4c7e-9a2f-5d0e1b7c9a31';

  beforeAll(async () => {
    svc = await createTestService({ seed: true });
    const demo = svc.demo!;
    doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Json;
    const token = await svc.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: demo.partner.cpo_client.client_id, client_secret: demo.partner.cpo_client.client_secret },
    });
    credential = { cpoToken: token.json().access_token, partnerKey: demo.partner.api_key, personalToken: demo.user.token, adminToken: TEST_ADMIN_TOKEN };
    // path parameters that name the demo's own records, so a request gets past its lookup
    ids = { partner_id: demo.partner.partner_id, charger_id: demo.charger.charger_id, user_id: demo.user.user_id };
  });
  afterAll(() => svc?.close());

  /** Sends one request as the operation's credential; returns what is wrong with its answer, or null. */
  async function judge(method: string, op: Json, url: string, body: string | undefined, what: string, type = 'application/json'): Promise<string | null> {
    const scheme = Object.keys(op.security?.[0] ?? {})[0];
    const res = await svc.app.inject({
      method: method.toUpperCase() as 'GET',
      url,
      headers: { ...(body === undefined ? {} : { 'content-type': type }), ...(scheme ? { authorization: `Bearer ${credential[scheme]}` } : {}) },
      ...(body === undefined ? {} : { payload: body }),
    });
    const where = `${method.toUpperCase()} ${url.slice(0, 120)} ${what}`;
    if (res.statusCode >= 500) return `${where} → ${res.statusCode} ${res.body.slice(0, 200)}`;
    if (!op.responses?.[String(res.statusCode)] && !SERVER_WIDE.has(res.statusCode)) return `${where} → ${res.statusCode}, not documented`;
    if (res.statusCode >= 400 && String(res.headers['content-type']).startsWith('application/json')) {
      // {error, detail}, with the fields the interface adds to some: how long to wait (429), the scope missing
      // (403), consent_required's message
      const b = res.json() as Json;
      const extra = Object.keys(b).filter((k) => !['error', 'detail', 'retry_after_seconds', 'required_scope', 'message'].includes(k));
      if (typeof b.error !== 'string' || (b.detail !== undefined && typeof b.detail !== 'string') || extra.length > 0) {
        return `${where} → ${res.statusCode} ${res.body.slice(0, 200)}, not {error, detail}`;
      }
    }
    return null;
  }

  it('in request bodies: each field of each example replaced in turn', { timeout: 120_000 }, async () => {
    const wrong: string[] = [];
    let sent = 0;
    for (const { method, path, op } of operations(doc)) {
      const media = op.requestBody?.content?.['application/json'];
      if (!media) continue;
      // the documented example, or (the admin API documents none) a body sampled from the schema
      const base = 'example' in media ? media.example : sampleOf(deref(doc, media.schema) as Json);
      const url = path.replace(/\{([^}]+)\}/g, (_, n: string) => ids[n] ?? ANY_ID);
      for (const at of fieldPaths(base, { root: true, items: 2 })) {
        for (const value of HOSTILE_VALUES) {
          const w = await judge(method, op, url, JSON.stringify(withField(base, at, value)), `${at.join('.') || '(body)'} = ${String(JSON.stringify(value)).slice(0, 30)}`);
          if (w) wrong.push(w);
          sent++;
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(sent).toBeGreaterThan(1000); // not vacuous: dozens of operations' examples, field by field
  });

  it('in query and path parameters: each documented parameter in turn', { timeout: 120_000 }, async () => {
    const wrong: string[] = [];
    let sent = 0;
    for (const { method, path, op } of operations(doc)) {
      const media = op.requestBody?.content?.['application/json'];
      const body = media && 'example' in media ? JSON.stringify(media.example) : undefined;
      for (const p of (op.parameters ?? []) as Json[]) {
        if (p.in !== 'query' && p.in !== 'path') continue;
        for (const text of HOSTILE_TEXT) {
          let url = path.replace(/\{([^}]+)\}/g, (_, n: string) => (p.in === 'path' && n === p.name ? text : (ids[n] ?? ANY_ID)));
          if (p.in === 'query') url += `?${p.name}=${text}`;
          const w = await judge(method, op, url, body, `${p.in} ${p.name}`);
          if (w) wrong.push(w);
          sent++;
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(sent).toBeGreaterThan(500);
  });

  it('in the pages’ forms, each on a live link of its own: the claim page and the signing page', { timeout: 120_000 }, async () => {
    // what a person can type into a form field, or a script post to it
    const FORM_VALUES = ['a\u0000b', '', 'x'.repeat(5000), '\ud800', '-1', '1e21', '9'.repeat(40), '__proto__', '<script>alert(1)</script>'];
    const encodings: Array<[string, (b: Record<string, string>) => string]> = [
      ['application/x-www-form-urlencoded', (b) => new URLSearchParams(b).toString()],
      ['application/json', (b) => JSON.stringify(b)],
    ];
    const wrong: string[] = [];
    let sent = 0;

    // a partner of its own: the tests above minted the demo partner a new key (and so revoked the one it had)
    const partner = await aPartner(svc.deps);
    // the claim page: one draft per request (a claimed draft answers 410), half of them with an address
    const claimFields = ['street', 'city', 'ean', 'postal_code', 'house_number', 'house_number_addition', 'locale', 'extra'];
    const n = claimFields.length * FORM_VALUES.length * encodings.length;
    const upload = await svc.app.inject({
      method: 'POST',
      url: '/partner/customers',
      headers: bearer(partner.apiKey),
      payload: { consent: true, send_invite: false, customers: Array.from({ length: n }, (_, i) => ({ name: `Klant ${i}`, email: `hostile-claim-${i}@ere-owner.nl`, ...(i % 2 ? { postal_code: '3511AB', house_number: '12' } : {}) })) },
    });
    expect(upload.statusCode, upload.body.slice(0, 300)).toBe(200);
    const links = (upload.json().claim_urls as Array<{ claim_url: string }>).map((c) => new URL(c.claim_url).pathname);
    expect(links).toHaveLength(n);
    const claimOp = doc.paths['/claim/{token}'].post;
    for (const field of claimFields) {
      for (const value of FORM_VALUES) {
        for (const [type, encode] of encodings) {
          const body = { street: 'Oudegracht', city: 'Utrecht', ean: anEan(), postal_code: '3511AB', house_number: '12', locale: 'nl', [field]: value };
          const w = await judge('post', claimOp, links[sent++]!, encode(body), `${field} = ${JSON.stringify(value).slice(0, 30)} (${type})`, type);
          if (w) wrong.push(w);
        }
      }
    }

    // the signing page: a link of its own per request, signed with the clause the page showed
    const signOp = doc.paths['/mandates/{token}'].post;
    for (const field of ['full_name', 'consent', 'clause_sha256', 'locale', 'extra']) {
      for (const value of FORM_VALUES) {
        for (const [type, encode] of encodings) {
          const account = await anAccount(svc, partner);
          const link = await svc.app.inject({ method: 'POST', url: '/v1/mandate-links', headers: bearer(await partner.cpoToken()), payload: { connection_id: account.connection_id } });
          const url = new URL(link.json().url as string).pathname;
          const clause = /name="clause_sha256" value="([0-9a-f]+)"/.exec((await svc.app.inject({ method: 'GET', url })).body)?.[1];
          expect(clause).toBeTruthy();
          const body = { full_name: 'Jan de Vries', consent: 'on', clause_sha256: clause!, [field]: value };
          const w = await judge('post', signOp, url, encode(body), `${field} = ${JSON.stringify(value).slice(0, 30)} (${type})`, type);
          if (w) wrong.push(w);
          sent++;
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(sent).toBe(n + 5 * FORM_VALUES.length * encodings.length);
  });
});
