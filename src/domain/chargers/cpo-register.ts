// POST /v1/chargers (spec §4.1 rules 1–6, C2.8): a CPO registers a charger on one of its accounts against a
// MID-certified catalog model of this environment's catalog. The account row is locked for the registration,
// so the 10-charger limit and the serial rule hold under concurrent requests.
import type { Deps } from '../../deps.ts';
import { DomainError } from '../errors.ts';
import { isAccountEreEligible } from '../accounts/eligibility.ts';
import { resolveCatalogModel, type CatalogModel } from '../catalog/resolve.ts';
import { findCatalogModel } from '../catalog/list.ts';
import { assertRoomForCharger } from './charger-limit.ts';
import { cutText } from '../../lib/nul.ts';

/** A registration as the contract gives it (schemas/http/chargers-cpo.ts has checked every type and the rule
 * catalog_charger_id, or both ocpp_vendor and ocpp_model). */
export interface RegisterChargerInput {
  account_id: string;
  catalog_charger_id?: string | null | undefined;
  ocpp_vendor?: string | null | undefined;
  ocpp_model?: string | null | undefined;
  serial_number?: string | null | undefined;
}

export interface RegisteredCpoCharger {
  /** false: the account already had a charger with this serial number (rule 1), which is the one answered */
  created: boolean;
  chargerId: string;
  /** the catalog model it was registered against (a new registration only) */
  catalog: { catalog_charger_id: string; brand: string; model: string } | null;
  midEligible: boolean;
  accountEreEligible: boolean;
}

const filled = (v: string | null | undefined): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

export async function registerCpoCharger(deps: Deps, partnerId: string, b: RegisterChargerInput): Promise<RegisteredCpoCharger> {
  const catalogId = filled(b.catalog_charger_id);
  const vendor = filled(b.ocpp_vendor);
  const modelName = filled(b.ocpp_model);
  if (!catalogId && !(vendor && modelName)) {
    throw new DomainError('vendor_and_model_required', 'Send catalog_charger_id, or both ocpp_vendor and ocpp_model.');
  }
  const serialSent = filled(b.serial_number);
  const serial = serialSent === null ? null : cutText(serialSent, 120);
  const accountId = b.account_id;

  const result = await deps.db.transaction().execute(async (trx) => {
    // C2.1: another partner's account is invisible
    const account = await trx
      .selectFrom('accounts')
      .select(['id'])
      .where('id', '=', accountId)
      .where('partner_id', '=', partnerId)
      .forUpdate()
      .executeTakeFirst();
    if (!account) throw new DomainError('account_not_found', 'No such account for this partner.');
    const chargers = await trx
      .selectFrom('chargers')
      .select(['id', 'serial_number', 'mid_certified'])
      .where('account_id', '=', accountId)
      .where('status', '=', 'active')
      .execute();
    // rule 1: an existing serial answers the existing charger
    const same = serial ? chargers.find((c) => c.serial_number === serial) : undefined;
    if (same) return { idempotent: true as const, chargerId: same.id, mid: same.mid_certified };
    // rule 4
    const conn = await trx
      .selectFrom('connections')
      .select('id')
      .where('account_id', '=', accountId)
      .where('status', '=', 'active')
      .executeTakeFirst();
    if (!conn) throw new DomainError('no_connection', 'The account has no active connection; create one first.');
    // rule 2
    if (chargers.length > 0 && !serial) {
      throw new DomainError('serial_required', 'The account already has a charger; send serial_number for every further charger.');
    }
    // rule 5, the same on every route (the account row is already locked above)
    await assertRoomForCharger(trx, accountId);
    // rules 3 and 6: this environment's catalog, resolved server-side; the caller never asserts MID status
    let model: Pick<CatalogModel, 'catalog_charger_id' | 'brand' | 'model' | 'mid_meter'>;
    if (catalogId) {
      const m = await findCatalogModel(trx, catalogId);
      if (!m) {
        throw new DomainError('catalog_not_found', 'No catalog model with this id in this environment (ids differ between sandbox and production).');
      }
      model = m;
    } else {
      const r = await resolveCatalogModel(trx, vendor!, modelName!);
      if (!r.resolved) throw new DomainError('catalog_unresolved', r.detail, { suggestions: r.suggestions.map(({ catalog_charger_id, brand, model }) => ({ catalog_charger_id, brand, model })) });
      model = r.model;
    }
    if (!model.mid_meter) {
      throw new DomainError('catalog_not_mid', `${model.brand} ${model.model} has no MID-certified meter; it cannot count toward ERE.`);
    }
    const now = deps.clock();
    const row = await trx
      .insertInto('chargers')
      .values({
        account_id: accountId,
        partner_id: partnerId,
        nickname: `${model.brand} ${model.model}`,
        connection_type: 'cloud_api',
        serial_number: serial,
        catalog_model_id: model.catalog_charger_id,
        ocpp_vendor: vendor,
        ocpp_model: modelName,
        mid_certified: model.mid_meter,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { idempotent: false as const, chargerId: row.id, mid: model.mid_meter, model };
  });
  const eligible = await isAccountEreEligible(deps.db, accountId);
  return {
    created: !result.idempotent,
    chargerId: result.chargerId,
    catalog: result.idempotent ? null : { catalog_charger_id: result.model.catalog_charger_id, brand: result.model.brand, model: result.model.model },
    midEligible: result.mid,
    accountEreEligible: eligible,
  };
}
