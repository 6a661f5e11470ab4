// The gateway's row per OCPP charger (ocpp_chargers): created on registration or on first use.
import type { Db } from '../../db/database.ts';
import type { Deps } from '../../deps.ts';
import type { RegistrationStatus } from '../../db/tables/ocpp.ts';
import { DomainError } from '../errors.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function ensureOcppCharger(db: Db, chargerId: string): Promise<void> {
  await db.insertInto('ocpp_chargers').values({ charger_id: chargerId }).onConflict((oc) => oc.column('charger_id').doNothing()).execute();
}

export async function requireCharger(deps: Deps, chargerId: string): Promise<{ id: string; ocpp_identity: string | null }> {
  const row = UUID.test(chargerId)
    ? await deps.db.selectFrom('chargers').select(['id', 'ocpp_identity']).where('id', '=', chargerId).where('status', '=', 'active').executeTakeFirst()
    : undefined;
  if (!row) throw new DomainError('charger_not_found', `No charger ${chargerId}.`);
  return row;
}

/** PUT /admin/chargers/:charger_id/registration (C4.4): what the next BootNotification answers. */
export async function setRegistrationStatus(
  deps: Deps,
  chargerId: string,
  status: RegistrationStatus,
): Promise<{ charger_id: string; registration_status: RegistrationStatus }> {
  await requireCharger(deps, chargerId);
  await ensureOcppCharger(deps.db, chargerId);
  await deps.db.updateTable('ocpp_chargers').set({ registration_status: status }).where('charger_id', '=', chargerId).execute();
  return { charger_id: chargerId, registration_status: status };
}

/**
 * GET /admin/chargers/:charger_id/registration (D164): what the next BootNotification answers, and when the last one
 * was answered Accepted or Pending (null: never, or only Rejected), read back. A charger without a gateway row yet
 * answers the column's default, Accepted.
 */
export async function getRegistrationStatus(
  deps: Deps,
  chargerId: string,
): Promise<{ charger_id: string; registration_status: RegistrationStatus; boot_answered_at: string | null }> {
  await requireCharger(deps, chargerId);
  const row = await deps.db.selectFrom('ocpp_chargers').select(['registration_status', 'boot_answered_at']).where('charger_id', '=', chargerId).executeTakeFirst();
  return {
    charger_id: chargerId,
    registration_status: row?.registration_status ?? 'Accepted',
    boot_answered_at: row?.boot_answered_at ? new Date(row.boot_answered_at).toISOString() : null,
  };
}

