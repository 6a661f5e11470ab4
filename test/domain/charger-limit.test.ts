// The 10-charger rule on every route (spec §4.1 rule 5, issue 12 item 5, D27): Personal POST /chargers and the
// operator's POST /admin/users/:user_id/chargers refuse an 11th active charger on an account with 422
// charger_limit, as CPO POST /v1/chargers does, concurrent registrations included; the three routes share one count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aPartner, aUser, bearer, type TestPartner } from '../helpers/factories.ts';
import { aMidCatalogModel, anEan } from '../helpers/onboarding-factories.ts';

let svc: TestService;
let partner: TestPartner;
let midModel: string;

beforeAll(async () => {
  svc = await createTestService();
  partner = await aPartner(svc.deps);
  midModel = await aMidCatalogModel(svc);
});
afterAll(() => svc.close());

/** An account of `userId` with an active connection; `partnerId` makes it reachable over the CPO API too. */
async function anAccountOf(userId: string, partnerId: string | null = null): Promise<string> {
  const acc = await svc.deps.db
    .insertInto('accounts')
    .values({ owner_user_id: userId, partner_id: partnerId, display_name: 'Home', cpo_external_ref: null, signatory_full_name: null, signatory_email: null, signatory_phone: null, fee_pct: null })
    .returning('id')
    .executeTakeFirstOrThrow();
  await svc.deps.db
    .insertInto('connections')
    .values({ account_id: acc.id, ean_code: anEan(), street: 'Dorpsstraat', house_number: '1', house_number_addition: null, postal_code: '1234AB', city: 'Utrecht', ean_validation_status: 'matched', ean_checked_at: null })
    .execute();
  return acc.id;
}

const personal = (token: string, accountId: string, nickname = 'Paal') =>
  svc.app.inject({ method: 'POST', url: '/chargers', headers: bearer(token), payload: { nickname, connection_type: 'ocpp', account_id: accountId } });
const asOperator = (userId: string, accountId: string) =>
  svc.app.inject({ method: 'POST', url: `/admin/users/${userId}/chargers`, headers: bearer(TEST_ADMIN_TOKEN), payload: { nickname: 'Fleet', account_id: accountId } });
const viaCpo = async (accountId: string, serial: string) =>
  svc.app.inject({ method: 'POST', url: '/v1/chargers', headers: bearer(await partner.cpoToken()), payload: { account_id: accountId, catalog_charger_id: midModel, serial_number: serial } });
const activeOn = async (accountId: string) =>
  (await svc.deps.db.selectFrom('chargers').select('id').where('account_id', '=', accountId).where('status', '=', 'active').execute()).length;

describe('at most 10 active chargers per account on every route', () => {
  it('Personal POST /chargers: the 11th charger on an account is 422 charger_limit and is not stored; chargers without an account are not limited', async () => {
    const owner = await aUser(svc.deps);
    const account = await anAccountOf(owner.userId);
    for (let i = 0; i < 10; i++) expect((await personal(owner.token, account, `Paal ${i}`)).statusCode).toBe(201);
    const eleventh = await personal(owner.token, account, 'Paal 11');
    expect(eleventh.statusCode).toBe(422);
    expect(eleventh.json()).toEqual({ error: 'charger_limit', detail: 'An account holds at most 10 active chargers.' });
    expect(await activeOn(account)).toBe(10);
    // a removed charger no longer counts
    const [one] = await svc.deps.db.selectFrom('chargers').select('id').where('account_id', '=', account).limit(1).execute();
    await svc.deps.db.updateTable('chargers').set({ status: 'removed' }).where('id', '=', one!.id).execute();
    expect((await personal(owner.token, account, 'Vervanger')).statusCode).toBe(201);
    expect((await personal(owner.token, account, 'Te veel')).statusCode).toBe(422);
    // the rule is per account: a charger of the user on no account is registered as before
    const loose = await svc.app.inject({ method: 'POST', url: '/chargers', headers: bearer(owner.token), payload: { nickname: 'Los', connection_type: 'ocpp' } });
    expect(loose.statusCode).toBe(201);
  });

  it('Personal POST /chargers: 14 concurrent registrations on one account store exactly 10', async () => {
    const owner = await aUser(svc.deps);
    const account = await anAccountOf(owner.userId);
    const rs = await Promise.all(Array.from({ length: 14 }, (_, i) => personal(owner.token, account, `Gelijktijdig ${i}`)));
    expect(rs.filter((r) => r.statusCode === 201)).toHaveLength(10);
    expect(rs.filter((r) => r.statusCode === 422).map((r) => r.json().error)).toEqual(Array(4).fill('charger_limit'));
    expect(await activeOn(account)).toBe(10);
  });

  it('operator POST /admin/users/:user_id/chargers: the 11th is 422 charger_limit, concurrently too', async () => {
    const owner = await aUser(svc.deps);
    const account = await anAccountOf(owner.userId);
    const rs = await Promise.all(Array.from({ length: 12 }, () => asOperator(owner.userId, account)));
    expect(rs.filter((r) => r.statusCode === 201)).toHaveLength(10);
    expect(rs.filter((r) => r.statusCode === 422).map((r) => r.json())).toEqual(Array(2).fill({ error: 'charger_limit', detail: expect.any(String) }));
    expect(await activeOn(account)).toBe(10);
  });

  it('the three routes share one count: CPO, Personal and operator registrations racing on one account stop at 10 together', async () => {
    const owner = await aUser(svc.deps);
    const account = await anAccountOf(owner.userId, partner.partnerId);
    expect((await viaCpo(account, 'MIX-first')).statusCode).toBe(201);
    const rs = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) => viaCpo(account, `MIX-${i}`)),
      ...Array.from({ length: 4 }, (_, i) => personal(owner.token, account, `Mix ${i}`)),
      ...Array.from({ length: 4 }, () => asOperator(owner.userId, account)),
    ]);
    expect(rs.filter((r) => r.statusCode === 201)).toHaveLength(9);
    expect(rs.filter((r) => r.statusCode === 422).map((r) => r.json().error)).toEqual(Array(3).fill('charger_limit'));
    expect(await activeOn(account)).toBe(10);
    for (const r of [await viaCpo(account, 'MIX-late'), await personal(owner.token, account), await asOperator(owner.userId, account)]) {
      expect(r.statusCode).toBe(422);
      expect(r.json().error).toBe('charger_limit');
    }
  });

  it('documents the 422 in the OpenAPI description of both routes', async () => {
    const doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(doc.paths['/chargers'].post.responses['422']).toBeDefined();
    expect(doc.paths['/admin/users/{user_id}/chargers'].post.responses['422']).toBeDefined();
    expect(doc.paths['/v1/chargers'].post.responses['422']).toBeDefined();
  });
});
