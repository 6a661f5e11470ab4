// POST /v1/chargers (spec §4.1 rules 1–6, C2.8): a CPO registers a charger on one of its accounts against a
// MID-certified catalog model of this environment's catalog. The account row is locked for the registration,
// so the 10-charger limit and the serial rule hold under concurrent requests.
import type { Deps } from '../../deps.ts';
import { DomainError } from '../errors.ts';
import { isUuid } from '../accounts/format.ts';
import { isAccountEreEligible } from '../accounts/eligibility.ts';
import { resolveCatalogModel, type CatalogModel } from '../catalog/resolve.ts';
import { findCatalogModel } from '../catalog/list.ts';
import { assertRoomForCharger } from './charger-limit.ts';

export interface RegisterChargerBody {
  account_id?: unknown;
  catalog_charger_id?: unknown;
  ocpp_vendor?: unknown;
  ocpp_model?: unknown;
  serial_number?: unknown;
}

export type RegisterChargerResult =
  | {
      status: 201;
      body: {
        ok: true;
        charger_id: string;
        catalog: { catalog_charger_id: string; brand: string; model: string };
        mid_eligible: boolean;
        account_ere_eligible: boolean;
      };
    }
  | {
      status: 200;
      body: { ok: true; idempotent: true; charger_id: string; mid_eligible: boolean; account_ere_eligible: boolean };
    };

const nonBlank = (v: unknown): v is string => typeof v === 'string' && v.trim() !== '';

export async function registerCpoCharger(deps: Deps, partnerId: string, raw: unknown): Promise<RegisterChargerResult> {
  const b = (typeof raw === 'object' && raw !== null ? raw : {}) as RegisterChargerBody;
  // body checks (400)
  if (!isUuid(b.account_id)) throw new DomainError('invalid_account_id', 'account_id must be a uuid.');
  const byId = b.catalog_charger_id !== undefined && b.catalog_charger_id !== null && b.catalog_charger_id !== '';
  if (byId && !isUuid(b.catalog_charger_id)) {
    throw new DomainError('invalid_catalog_charger_id', 'catalog_charger_id must be a uuid of this environment’s catalog.');
  }
  if (!byId && !(nonBlank(b.ocpp_vendor) && nonBlank(b.ocpp_model))) {
    throw new DomainError('vendor_and_model_required', 'Send catalog_charger_id, or both ocpp_vendor and ocpp_model.');
  }
  if (b.serial_number !== undefined && b.serial_number !== null && typeof b.serial_number !== 'string') {
    throw new DomainError('invalid_request', 'serial_number must be a string.');
  }
  const serial = typeof b.serial_number === 'string' && b.serial_number.trim() !== '' ? b.serial_number.trim().slice(0, 120) : null;
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
    if (byId) {
      const m = await findCatalogModel(trx, b.catalog_charger_id as string);
      if (!m) {
        throw new DomainError('catalog_not_found', 'No catalog model with this id in this environment (ids differ between sandbox and production).');
      }
      model = m;
    } else {
      const r = await resolveCatalogModel(trx, b.ocpp_vendor as string, b.ocpp_model as string);
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
        ocpp_vendor: nonBlank(b.ocpp_vendor) ? b.ocpp_vendor.trim() : null,
        ocpp_model: nonBlank(b.ocpp_model) ? b.ocpp_model.trim() : null,
        mid_certified: model.mid_meter,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { idempotent: false as const, chargerId: row.id, mid: model.mid_meter, model };
  });
  const eligible = await isAccountEreEligible(deps.db, accountId);
  if (result.idempotent) {
    return {
      status: 200,
      body: { ok: true, idempotent: true, charger_id: result.chargerId, mid_eligible: result.mid, account_ere_eligible: eligible },
    };
  }
  return {
    status: 201,
    body: {
      ok: true,
      charger_id: result.chargerId,
      catalog: { catalog_charger_id: result.model.catalog_charger_id, brand: result.model.brand, model: result.model.model },
      mid_eligible: result.mid,
      account_ere_eligible: eligible,
    },
  };
}
