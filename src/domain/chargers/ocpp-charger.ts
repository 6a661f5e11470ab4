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
