// A request body that fails its typed schema answers with the spec's code of the first failing field
// (src/http/validation-codes.ts), in the order the error list of POST /v1/accounts and POST /v1/chargers names
// them; a field without its own code answers invalid_request; what the old checks accepted is still accepted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { accountBody } from '../helpers/onboarding-factories.ts';

describe('typed request bodies keep the spec codes', () => {
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
    svc.app.inject({ method: 'POST', url, headers: { ...bearer(token), 'content-type': 'application/json' }, payload: JSON.stringify(payload) });

  it.each([
    ['a body that is not an object', [], 'person_required'],
    ['a connection that is not an object', { ...accountBody(), connection: 'Keizersgracht 12' }, 'invalid_ean'],
    ['an EAN given as a number', accountBody({ connection: { ean_code: 871685900012345674 as never } }), 'invalid_ean'],
    ['a street given as an object', accountBody({ connection: { street: { name: 'x' } as never } }), 'address_required'],
    ['an e-mail address given as a number', accountBody({ person: { email: 5 as never } }), 'invalid_request'],
    ['a display_name given as a number', { ...accountBody(), display_name: 7 }, 'invalid_request'],
    ['type and person both wrong: type first', { ...accountBody(), type: 'x', person: null }, 'invalid_type'],
    ['iban and person both wrong: iban first', { ...accountBody(), iban: 'NL91', person: {} }, 'invalid_iban'],
  ])('POST /v1/accounts: %s → 400 %s', async (_what, body, code) => {
    const res = await post('/v1/accounts', body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: code, detail: expect.any(String) });
  });

  it('POST /v1/accounts still takes a numeric house number, null type and payout_handler, and a spaced IBAN', async () => {
    const res = await post('/v1/accounts', { ...accountBody({ connection: { house_number: 12 as never } }), type: null, payout_handler: null, iban: ' nl91 abna 0417 1643 00 ' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ iban_stored: true, account: { type: 'particulier', payout_handler: 'joulo_pays_customer' } });
  });

  it.each([
    ['no body fields', {}, 'invalid_account_id'],
    ['an account_id that is not a uuid', { account_id: 12 }, 'invalid_account_id'],
    ['a catalog_charger_id that is not a uuid', { account_id: '22222222-2222-4222-8222-222222222222', catalog_charger_id: 5 }, 'invalid_catalog_charger_id'],
    ['an ocpp_model given as a number', { account_id: '22222222-2222-4222-8222-222222222222', ocpp_vendor: 'Alfen BV', ocpp_model: 9 }, 'vendor_and_model_required'],
    ['a serial_number given as a number', { account_id: '22222222-2222-4222-8222-222222222222', ocpp_vendor: 'Alfen BV', ocpp_model: 'NG910', serial_number: 1 }, 'invalid_request'],
  ])('POST /v1/chargers: %s → 400 %s', async (_what, body, code) => {
    const res = await post('/v1/chargers', body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: code, detail: expect.any(String) });
  });

  it('POST /v1/mandate-links keeps the domain rules for its target: an id that is no uuid is 404, none is 400', async () => {
    expect((await post('/v1/mandate-links', { connection_id: 42 })).json()).toMatchObject({ error: 'connection_not_found' });
    expect((await post('/v1/mandate-links', { connection_id: 'nope' })).statusCode).toBe(404);
    expect((await post('/v1/mandate-links', {})).json()).toMatchObject({ error: 'target_required' });
  });

  it('the detail of invalid_request names the field as body.<path>, and the body itself as body', async () => {
    const root = await svc.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/json' }, payload: '[]' });
    expect(root.statusCode).toBe(400);
    expect(root.json()).toEqual({ error: 'invalid_request', detail: expect.stringMatching(/^body: /) });
    const field = await svc.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/json' }, payload: '{"grant_type":5}' });
    expect(field.json()).toEqual({ error: 'invalid_request', detail: expect.stringMatching(/^body\.grant_type: /) });
  });

  it('POST /v1/sessions:batch rejects a bad item on its own', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/v1/sessions:batch',
      headers: bearer(await partner.cpoToken(['cpo:sessions:write'])),
      payload: { items: [{ cpo_external_ref: 'nobody', month: 'oct', kwh: 'ten' }, 'not an item'] },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().results.map((r: { status: string }) => r.status)).toEqual(['rejected', 'rejected']);
  });
});
