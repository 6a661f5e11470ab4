// POST /v1/chargers (spec §4.1 rules 1–6, every error), account_ere_eligible (C2.8) and the §3 eligibility row.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService, TEST_ADMIN_TOKEN } from '../helpers/app.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { aMidCatalogModel, anAccount, anEligibleAccount, aSignedMandate } from '../helpers/onboarding-factories.ts';

describe('POST /v1/chargers', () => {
  let svc: TestService;
  let partner: TestPartner;
  let other: TestPartner;
  let token: string;
  let midModel: string;
  let nonMidModel: string;

  beforeAll(async () => {
    svc = await createTestService();
    partner = await aPartner(svc.deps);
    other = await aPartner(svc.deps);
    token = await partner.cpoToken();
    midModel = await aMidCatalogModel(svc);
    const res = await svc.app.inject({
      method: 'POST',
      url: '/admin/catalog/models',
      headers: bearer(TEST_ADMIN_TOKEN),
      payload: { brand: 'NoMid', model: 'Basic 11', mid_meter: false, aliases: [{ vendor: 'NoMid BV', model: 'BASIC-11', match: 'exact' }] },
    });
    nonMidModel = res.json().catalog_charger_id;
  });
  afterAll(() => svc.close());

  const register = (payload: unknown, t = token) =>
    svc.app.inject({ method: 'POST', url: '/v1/chargers', headers: bearer(t), payload: payload as object });
  const chargersOf = (accountId: string) => svc.deps.db.selectFrom('chargers').selectAll().where('account_id', '=', accountId).execute();

  it('registers a MID charger by catalog id: response shape and stored row; the account is not yet eligible without a signed machtiging', async () => {
    const a = await anAccount(svc, partner);
    const res = await register({ account_id: a.account_id, catalog_charger_id: midModel });
    expect(res.statusCode).toBe(201);
    const j = res.json();
    expect(j).toEqual({
      ok: true,
      charger_id: expect.any(String),
      catalog: { catalog_charger_id: midModel, brand: 'Alfen', model: 'Eve Single Pro-line' },
      mid_eligible: true,
      account_ere_eligible: false,
    });
    const [row] = await chargersOf(a.account_id);
    expect(row).toMatchObject({ id: j.charger_id, partner_id: partner.partnerId, connection_type: 'cloud_api', status: 'active', serial_number: null, catalog_model_id: midModel, mid_certified: true });
  });

  it('§3: registering a MID charger makes an account with matched EAN, signed machtiging and IBAN eligible', async () => {
    const a = await anAccount(svc, partner);
    await aSignedMandate(svc, a.connection_id, { partner });
    const res = await register({ account_id: a.account_id, ocpp_vendor: 'Alfen BV', ocpp_model: 'NG910-60123', serial_number: 'ACE0012345' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ mid_eligible: true, account_ere_eligible: true, catalog: { brand: 'Alfen', model: 'Eve Single Pro-line' } });
    expect((await chargersOf(a.account_id))[0]).toMatchObject({ ocpp_vendor: 'Alfen BV', ocpp_model: 'NG910-60123', serial_number: 'ACE0012345' });
  });

  it('C2.8: without an IBAN the account stays ineligible after a MID charger', async () => {
    const a = await anAccount(svc, partner, { iban: null });
    await aSignedMandate(svc, a.connection_id, { partner });
    const res = await register({ account_id: a.account_id, catalog_charger_id: midModel });
    expect(res.json().account_ere_eligible).toBe(false);
  });

  it('C2.8: the IBAN is required whatever the payout_handler; a re-post with the IBAN completes eligibility', async () => {
    const a = await anAccount(svc, partner, { iban: null, payout_handler: 'via_cpo_invoicing' });
    await aSignedMandate(svc, a.connection_id, { partner });
    const first = await register({ account_id: a.account_id, catalog_charger_id: midModel, serial_number: 'IBAN-1' });
    expect(first.json().account_ere_eligible).toBe(false);
    const repost = await svc.app.inject({ method: 'POST', url: '/v1/accounts', headers: bearer(token), payload: { ...a.body, iban: 'NL02RABO0123456789' } });
    expect(repost.json()).toMatchObject({ idempotent: true, iban_stored: true, mandate_status: 'active' });
    const again = await register({ account_id: a.account_id, catalog_charger_id: midModel, serial_number: 'IBAN-1' });
    expect(again.json()).toMatchObject({ idempotent: true, account_ere_eligible: true });
  });

  it('rule 1: an existing serial_number returns the existing charger (idempotent, no catalog block)', async () => {
    const a = await anAccount(svc, partner);
    const first = await register({ account_id: a.account_id, catalog_charger_id: midModel, serial_number: 'SER-1' });
    const again = await register({ account_id: a.account_id, catalog_charger_id: midModel, serial_number: 'SER-1' });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ ok: true, idempotent: true, charger_id: first.json().charger_id, mid_eligible: true, account_ere_eligible: false });
    expect(await chargersOf(a.account_id)).toHaveLength(1);
  });

  it('rule 2: once an account has a charger, a registration without serial_number is 409 serial_required', async () => {
    const a = await anAccount(svc, partner);
    await register({ account_id: a.account_id, catalog_charger_id: midModel });
    const res = await register({ account_id: a.account_id, catalog_charger_id: midModel });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'serial_required', detail: expect.any(String) });
    expect(await chargersOf(a.account_id)).toHaveLength(1);
  });

  it('rule 3: 422 catalog_unresolved for a pair that cannot be placed (with the brand’s MID suggestions)', async () => {
    const a = await anAccount(svc, partner);
    const res = await register({ account_id: a.account_id, ocpp_vendor: 'Alfen BV', ocpp_model: 'XX-UNKNOWN' });
    expect(res.statusCode).toBe(422);
    const j = res.json();
    expect(j).toMatchObject({ error: 'catalog_unresolved', detail: expect.any(String) });
    expect(j.suggestions.map((s: { brand: string }) => s.brand)).toContain('Alfen');
    expect(await chargersOf(a.account_id)).toHaveLength(0);
  });

  it('rule 3: 422 catalog_not_mid for a non-MID model, by id and by vendor/model', async () => {
    const a = await anAccount(svc, partner);
    const byId = await register({ account_id: a.account_id, catalog_charger_id: nonMidModel });
    expect(byId.statusCode).toBe(422);
    expect(byId.json()).toEqual({ error: 'catalog_not_mid', detail: expect.any(String) });
    const byPair = await register({ account_id: a.account_id, ocpp_vendor: 'NoMid BV', ocpp_model: 'basic-11' });
    expect(byPair.json().error).toBe('catalog_not_mid');
    expect(await chargersOf(a.account_id)).toHaveLength(0);
  });

  it('rule 4: 409 no_connection when the account has no active connection', async () => {
    const a = await anAccount(svc, partner);
    await svc.deps.db.updateTable('connections').set({ status: 'archived' }).where('id', '=', a.connection_id).execute();
    const res = await register({ account_id: a.account_id, catalog_charger_id: midModel });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'no_connection', detail: expect.any(String) });
  });

  it('rule 5: at most 10 active chargers per account (422 charger_limit); concurrent registrations respect it', async () => {
    const a = await anAccount(svc, partner);
    const rs = await Promise.all(Array.from({ length: 12 }, (_, i) => register({ account_id: a.account_id, catalog_charger_id: midModel, serial_number: `LIM-${i}` })));
    const codes = rs.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 201)).toHaveLength(10);
    expect(rs.filter((r) => r.statusCode === 422).map((r) => r.json().error)).toEqual(['charger_limit', 'charger_limit']);
    expect(await chargersOf(a.account_id)).toHaveLength(10);
  });

  it('rule 6: a catalog id unknown in this environment is 404 catalog_not_found', async () => {
    const a = await anAccount(svc, partner);
    const res = await register({ account_id: a.account_id, catalog_charger_id: '11111111-1111-4111-8111-111111111111' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'catalog_not_found', detail: expect.any(String) });
  });

  it('catalog_charger_id wins over ocpp_vendor/ocpp_model', async () => {
    const a = await anAccount(svc, partner);
    const res = await register({ account_id: a.account_id, catalog_charger_id: midModel, ocpp_vendor: 'NoMid BV', ocpp_model: 'BASIC-11' });
    expect(res.statusCode).toBe(201);
  });

  it.each([
    ['invalid_account_id', { catalog_charger_id: 'x' }],
    ['invalid_account_id', { account_id: 'nope' }],
    ['invalid_catalog_charger_id', { account_id: '22222222-2222-4222-8222-222222222222', catalog_charger_id: 'abc' }],
    ['vendor_and_model_required', { account_id: '22222222-2222-4222-8222-222222222222', ocpp_vendor: 'Alfen BV' }],
    ['vendor_and_model_required', { account_id: '22222222-2222-4222-8222-222222222222' }],
  ])('400 %s for %j', async (code, payload) => {
    const res = await register(payload);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: code, detail: expect.any(String) });
  });

  it('404 account_not_found for an unknown account and for another partner’s account (tenancy)', async () => {
    const a = await anAccount(svc, partner);
    const unknown = await register({ account_id: '33333333-3333-4333-8333-333333333333', catalog_charger_id: midModel });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toBe('account_not_found');
    const foreign = await register({ account_id: a.account_id, catalog_charger_id: midModel }, await other.cpoToken());
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual({ error: 'account_not_found', detail: expect.any(String) });
    expect(await chargersOf(a.account_id)).toHaveLength(0);
  });

  it('needs cpo:chargers:write', async () => {
    const res = await register({}, await partner.cpoToken(['cpo:accounts:write']));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'Insufficient scope', required_scope: 'cpo:chargers:write' });
  });

  it('anEligibleAccount (factory for other areas) yields an eligible account', async () => {
    const e = await anEligibleAccount(svc, partner);
    const { isAccountEreEligible } = await import('../../src/domain/accounts/eligibility.ts');
    expect(await isAccountEreEligible(svc.deps.db, e.account_id)).toBe(true);
  });
});
