// D228: what a CPO reads in `detail` when POST /v1/accounts or POST /v1/chargers fails its schema: a sentence that
// names the field ("person is required.", "connection.city is required.", "catalog_charger_id must be a uuid."),
// never the validator's own wording. The error codes stay the spec's (validation-codes.test.ts). The sweep sends
// each field of a valid body missing, empty, blank and of every wrong JSON type.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { accountBody } from '../helpers/onboarding-factories.ts';
import { fieldPaths, withField } from '../helpers/field-mutations.ts';

/** What the validator itself writes: none of it may reach a CPO. */
const RAW = /Invalid input|Invalid string|Invalid option|must match pattern|Too (big|small)|expected \w+, received|\/\^|\\S/;

const ACCOUNT_ID = '22222222-2222-4222-8222-222222222222';
const CATALOG_ID = '33333333-3333-4333-8333-333333333333';
/** a field left out, empty, blank, and each wrong JSON type */
const VALUES: unknown[] = [undefined, null, '', '   ', 'nope', -1, 0, 1.5, true, [], {}, ['x'], { a: 1 }];

describe('D228: the detail of a failed field names the field in a sentence', () => {
  let svc: TestService;
  let partner: TestPartner;
  let token: string;

  beforeAll(async () => {
    svc = await createTestService();
    partner = await aPartner(svc.deps);
    token = await partner.cpoToken();
  });
  afterAll(() => svc?.close());

  const post = (url: string, payload: unknown) =>
    svc.app.inject({
      method: 'POST',
      url,
      headers: { ...bearer(token), 'content-type': 'application/json' },
      ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
    });

  it.each([
    ['person missing', 'person_required', 'person is required.', () => { const { person: _, ...b } = accountBody(); return b; }],
    ['person a string', 'person_required', 'person must be an object.', () => ({ ...accountBody(), person: 'Jan' })],
    ['connection missing', 'invalid_ean', 'connection is required.', () => { const { connection: _, ...b } = accountBody(); return b; }],
    ['person only', 'invalid_ean', 'connection is required.', () => ({ person: { full_name: 'A' } })],
    ['city empty', 'address_required', 'connection.city is required.', () => accountBody({ connection: { city: '' } })],
    ['city blank', 'address_required', 'connection.city is required.', () => accountBody({ connection: { city: '  ' } })],
    ['city missing', 'address_required', 'connection.city is required.', () => accountBody({ connection: { city: undefined } })],
    ['city null', 'address_required', 'connection.city is required.', () => accountBody({ connection: { city: null } })],
    ['house number 0', 'address_required', 'connection.house_number must be greater than 0.', () => accountBody({ connection: { house_number: 0 } })],
    ['no body object', 'person_required', 'The request body must be a JSON object.', () => []],
  ])('POST /v1/accounts, %s → %s, "%s"', async (_what, code, detail, body) => {
    const res = await post('/v1/accounts', body());
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: code, detail });
  });

  it.each([
    ['catalog_charger_id "nope"', 'invalid_catalog_charger_id', 'catalog_charger_id must be a uuid.', { account_id: ACCOUNT_ID, catalog_charger_id: 'nope' }],
    ['account_id "x"', 'invalid_account_id', 'account_id must be a uuid.', { account_id: 'x', catalog_charger_id: CATALOG_ID }],
    ['account_id missing', 'invalid_account_id', 'account_id must be a uuid.', { catalog_charger_id: CATALOG_ID }],
  ])('POST /v1/chargers, %s → %s, "%s"', async (_what, code, detail, body) => {
    const res = await post('/v1/chargers', body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: code, detail });
  });

  const sweep = (name: string, url: string, valid: () => Record<string, unknown>) =>
    it(`${name}: every field missing, empty or of a wrong type answers a sentence naming it`, async () => {
      const seen: string[] = [];
      for (const at of fieldPaths(valid(), { root: false, items: 1 })) {
        for (const v of VALUES) {
          const res = await post(url, withField(valid(), at, v));
          if (res.statusCode !== 400) continue;
          const { error, detail } = res.json() as { error: string; detail: string };
          const what = `${at.join('.')} = ${JSON.stringify(v)}: ${error} "${detail}"`;
          expect(detail, what).not.toMatch(RAW);
          // a schema failure names the field it failed on (the spec's code for that field, or invalid_request)
          if (error !== 'ean_in_use' && !/^(The request body|Send )/.test(detail)) expect(detail, what).toMatch(/^[a-z_]+(\.[a-z_]+)* /);
          expect(detail, what).toMatch(/\.$/);
          seen.push(what);
        }
      }
      // the sweep did reach the schema: most of these bodies are refused
      expect(seen.length).toBeGreaterThan(40);
    });

  sweep('POST /v1/accounts', '/v1/accounts', () => accountBody());
  sweep('POST /v1/chargers', '/v1/chargers', () => ({ account_id: ACCOUNT_ID, catalog_charger_id: CATALOG_ID, ocpp_vendor: 'Alfen BV', ocpp_model: 'NG910', serial_number: 'SN-1' }));

  it('the body itself left out or of the wrong type', async () => {
    for (const body of [undefined, 'x', 5, null]) {
      for (const url of ['/v1/accounts', '/v1/chargers']) {
        const res = await post(url, body);
        expect(res.statusCode, `${url} ${JSON.stringify(body)}`).toBe(400);
        expect(res.json().detail, `${url} ${JSON.stringify(body)}`).not.toMatch(RAW);
      }
    }
  });
});
