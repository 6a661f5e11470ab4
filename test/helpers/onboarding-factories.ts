// Factories of the onboarding area: accounts, connections, signed mandates and registered chargers, made
// through the real routes (and the domain's own signature function), for this area's tests and others'.
import type { TestService } from './app.ts';
import { TEST_ADMIN_TOKEN } from './app.ts';
import { bearer, type TestPartner } from './factories.ts';
import { gs1CheckDigit } from '../../src/domain/ean/ean.ts';
import { loadRegisterEntries } from '../../src/domain/ean/register.ts';
import { signMandateAsCustomer } from '../../src/domain/mandates/index.ts';

let eanSeq = 0;

/** A fresh Dutch EAN (871…) with a valid GS1 check digit, unique within the process. */
export function anEan(prefix = '871'): string {
  const body = (prefix + String(process.pid % 1000).padStart(3, '0') + String(Date.now() % 1e7).padStart(7, '0') + String(++eanSeq).padStart(4, '0')).slice(0, 17).padEnd(17, '0');
  return body + String(gs1CheckDigit(body));
}

let refSeq = 0;
export const aRef = (p = 'cust') => `${p}-${process.pid}-${++refSeq}-${Date.now().toString(36)}`;

export interface AccountBodyOverrides {
  [k: string]: unknown;
  connection?: Record<string, unknown>;
  person?: Record<string, unknown>;
}

let houseSeq = 0;
/** A valid POST /v1/accounts body; overrides replace top-level fields (connection/person merge). */
export function accountBody(o: AccountBodyOverrides = {}): Record<string, unknown> {
  const { connection, person, ...rest } = o;
  return {
    type: 'particulier',
    display_name: 'Fam. de Vries',
    cpo_external_ref: aRef(),
    payout_handler: 'joulo_pays_customer',
    iban: 'NL91 ABNA 0417 1643 00',
    person: { full_name: 'Jan de Vries', email: 'jan@devries-test.nl', phone: '+31612345678', ...person },
    connection: {
      ean_code: anEan(),
      street: 'Laadpaalstraat',
      house_number: String(10 + (++houseSeq % 900)),
      postal_code: '3511 AB',
      city: 'Utrecht',
      ...connection,
    },
    ...rest,
  };
}

export interface CreatedAccount {
  account_id: string;
  connection_id: string;
  location_id: string;
  ean_code: string;
  cpo_external_ref: string;
  body: Record<string, unknown>;
}

/** POST /v1/accounts through the API; throws unless 201. */
export async function anAccount(svc: TestService, partner: TestPartner, o: AccountBodyOverrides = {}): Promise<CreatedAccount> {
  const body = accountBody(o);
  const res = await svc.app.inject({ method: 'POST', url: '/v1/accounts', headers: bearer(await cpoTokenOf(svc, partner)), payload: body });
  if (res.statusCode !== 201) throw new Error(`anAccount: ${res.statusCode} ${res.body}`);
  const j = res.json();
  return {
    account_id: j.account_id,
    connection_id: j.connection_id,
    location_id: j.location_id,
    ean_code: (body.connection as { ean_code: string }).ean_code,
    cpo_external_ref: body.cpo_external_ref as string,
    body,
  };
}

/** Put an (EAN, address) pair in the embedded EAN register (production tests). */
export async function inEanRegister(svc: TestService, ean: string, address: { postal_code: string; house_number: string; house_number_addition?: string | null }) {
  await loadRegisterEntries(svc.deps.db, [{ ean_code: ean, ...address }]);
}

/**
 * Sign the connection's pending machtiging as the customer would. With a partner on the sandbox this goes
 * through the real helper route (POST /sandbox/connections/:id/sign-mandate); otherwise (production, where
 * /sandbox is 404) through the same domain function the helper calls.
 */
export async function aSignedMandate(svc: TestService, connectionId: string, opts: { partner?: TestPartner; fullName?: string } = {}) {
  const fullName = opts.fullName ?? 'Jan de Vries';
  if (opts.partner && svc.deps.config.APP_ENV === 'sandbox') {
    const res = await svc.app.inject({
      method: 'POST',
      url: `/sandbox/connections/${connectionId}/sign-mandate`,
      headers: bearer(await cpoTokenOf(svc, opts.partner)),
      payload: { full_name: fullName },
    });
    if (res.statusCode !== 200) throw new Error(`aSignedMandate: ${res.statusCode} ${res.body}`);
    return res.json();
  }
  return signMandateAsCustomer(svc.deps, connectionId, { fullName, ip: '127.0.0.1', userAgent: 'onboarding-factories' });
}

const tokenCache = new WeakMap<TestPartner, { token: string; issuedAt: number }>();
/** A CPO token with all the partner's scopes, reused while it is younger than 50 minutes on the service clock. */
export async function cpoTokenOf(svc: TestService, partner: TestPartner): Promise<string> {
  const now = svc.deps.clock().getTime();
  const hit = tokenCache.get(partner);
  if (hit && now >= hit.issuedAt && now - hit.issuedAt < 50 * 60_000) return hit.token;
  const token = await partner.cpoToken();
  tokenCache.set(partner, { token, issuedAt: now });
  return token;
}

/** The id of a MID model of the bundled catalog (default: Alfen Eve Single Pro-line). */
export async function aMidCatalogModel(svc: TestService, brand = 'Alfen', model = 'Eve Single Pro-line'): Promise<string> {
  const row = await svc.deps.db
    .selectFrom('catalog_models')
    .select('id')
    .where('brand', '=', brand)
    .where('model', '=', model)
    .executeTakeFirst();
  if (row) return row.id;
  const res = await svc.app.inject({
    method: 'POST',
    url: '/admin/catalog/models',
    headers: bearer(TEST_ADMIN_TOKEN),
    payload: { brand, model, mid_meter: true },
  });
  return res.json().catalog_charger_id;
}

/** POST /v1/chargers through the API; throws unless 201/200. */
export async function aCpoCharger(
  svc: TestService,
  partner: TestPartner,
  accountId: string,
  o: { catalog_charger_id?: string; serial_number?: string; ocpp_vendor?: string; ocpp_model?: string } = {},
): Promise<{ charger_id: string; account_ere_eligible: boolean }> {
  const payload = { account_id: accountId, ...(o.ocpp_vendor ? {} : { catalog_charger_id: o.catalog_charger_id ?? (await aMidCatalogModel(svc)) }), ...o };
  const res = await svc.app.inject({ method: 'POST', url: '/v1/chargers', headers: bearer(await cpoTokenOf(svc, partner)), payload });
  if (res.statusCode !== 201 && res.statusCode !== 200) throw new Error(`aCpoCharger: ${res.statusCode} ${res.body}`);
  return res.json();
}

/**
 * An ERE-eligible account (C2.8): connection matched (on production the pair is put in the EAN register
 * first), machtiging signed, IBAN stored and a registered MID charger.
 */
export async function anEligibleAccount(svc: TestService, partner: TestPartner, o: AccountBodyOverrides = {}) {
  const body = accountBody(o);
  const conn = body.connection as { ean_code: string; postal_code: string; house_number: string };
  if (svc.deps.config.APP_ENV === 'production') await inEanRegister(svc, conn.ean_code, conn);
  const acc = await anAccount(svc, partner, body);
  await aSignedMandate(svc, acc.connection_id, { partner });
  const charger = await aCpoCharger(svc, partner, acc.account_id, { serial_number: `SN-${acc.cpo_external_ref}` });
  if (!charger.account_ere_eligible) throw new Error('anEligibleAccount: account did not become eligible');
  return { ...acc, charger_id: charger.charger_id };
}
