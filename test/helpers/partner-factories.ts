// Factories of the partner area's tests: EANs with a valid GS1 check digit, EAN register rows, chargers of
// a partner, and the upload calls.
import type { Deps } from '../../src/deps.ts';
import { gs1CheckDigit } from '../../src/domain/ean/ean.ts';
import { loadRegisterEntries } from '../../src/domain/ean/index.ts';
import { TEST_ADMIN_TOKEN, type TestService } from './app.ts';
import { bearer } from './factories.ts';

let eanSeq = 1000;

/** A Dutch EAN (871…, 18 digits) with a correct check digit; distinct per call unless `n` is given. */
export function anEan(n: number = ++eanSeq): string {
  const first17 = '871' + String(n).padStart(14, '0');
  return first17 + String(gs1CheckDigit(first17));
}

/** The same EAN with a wrong check digit. */
export function badCheckDigit(ean: string): string {
  return ean.slice(0, 17) + String((Number(ean[17]) + 1) % 10);
}

export async function registerEans(
  deps: Deps,
  entries: Array<{ ean_code: string; postal_code: string; house_number: string; house_number_addition?: string | null }>,
): Promise<void> {
  await loadRegisterEntries(deps.db, entries.map((e) => ({ house_number_addition: null, ...e })));
}

/** A catalog model and an active charger registered by the partner as POST /v1/chargers does: on one of the partner's CPO accounts (without an owner). */
export async function aPartnerCharger(
  deps: Deps,
  opts: { partnerId: string; brand: string; serial: string; ownerUserId?: string | null },
): Promise<{ chargerId: string; catalogModelId: string }> {
  const model = await deps.db
    .insertInto('catalog_models')
    .values({ brand: opts.brand, model: `Model ${opts.serial}`, mid_meter: true, source_note: 'test' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const account = await deps.db
    .insertInto('accounts')
    .values({ partner_id: opts.partnerId, access_channel: 'cpo_api', display_name: `CPO ${opts.serial}`, signatory_full_name: 'CPO', signatory_email: 'cpo@example.nl' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const c = await deps.db
    .insertInto('chargers')
    .values({
      account_id: account.id,
      partner_id: opts.partnerId,
      serial_number: opts.serial,
      catalog_model_id: model.id,
      connection_type: 'cloud_api',
      mid_certified: true,
      owner_user_id: opts.ownerUserId ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { chargerId: c.id, catalogModelId: model.id };
}

export async function postCustomers(svc: TestService, apiKey: string, body: unknown) {
  return svc.app.inject({ method: 'POST', url: '/partner/customers', headers: bearer(apiKey), payload: body as object });
}

export async function postImport(svc: TestService, apiKey: string, body: unknown) {
  return svc.app.inject({ method: 'POST', url: '/partner/drafts/import', headers: bearer(apiKey), payload: body as object });
}

export const adminHeaders = bearer(TEST_ADMIN_TOKEN);

/** The drafts stored for a partner, oldest first. */
export async function draftsOf(deps: Deps, partnerId: string) {
  return deps.db.selectFrom('partner_drafts').selectAll().where('partner_id', '=', partnerId).orderBy('created_at').orderBy('row_index').execute();
}

/** The claim token in a claim URL. */
export const tokenOf = (claimUrl: string): string => claimUrl.slice(claimUrl.lastIndexOf('/') + 1);
