// C5.5: the verdict on each signed meter value, written with the reading (meter_readings.signature_status). The key
// is the one registered for the charger (chargers.ocmf_public_key) when there is one, else the key the charger sends
// in the signed value. Only readings that carry signed data cost anything: one query for the registered keys of
// their chargers, then the check itself (about 0.1 ms per P-256 signature).
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { type SignatureStatus, verifySignedData } from '../ocmf/index.ts';
import type { EnergyReading } from './events.ts';

/** The registered OCMF keys of chargers, by charger id (only those that have one). */
export async function registeredKeys(trx: Db, chargerIds: string[]): Promise<Map<string, string>> {
  const ids = [...new Set(chargerIds)];
  if (ids.length === 0) return new Map();
  const rows = await trx.selectFrom('chargers').select(['id', 'ocmf_public_key']).where('id', 'in', ids).where('ocmf_public_key', 'is not', null).execute();
  return new Map(rows.map((r) => [r.id, r.ocmf_public_key!]));
}

/** The verdict on a signed value attached to a plain register reading. */
export function signatureStatusOf(signedData: string, registeredKey: string | undefined, reading: { wh: bigint; at: Date }): SignatureStatus {
  return verifySignedData({ signedData, registeredKey, reading }).status;
}

/**
 * Gives every signed reading of the items its verdict (signatureStatus), replacing each item's `readings` by the
 * judged copies; unsigned readings are left as they are. One query for all the items' chargers, none without a
 * signed reading. The items are the caller's own (a batch's candidates, storeReadings' arguments).
 */
export async function judgeSignatures(trx: Db, items: Array<{ chargerId: string; readings: EnergyReading[] }>): Promise<void> {
  const signed = items.filter((i) => i.readings.some((r) => r.signedData !== null));
  if (signed.length === 0) return;
  const keys = await registeredKeys(trx, signed.map((i) => i.chargerId));
  for (const item of signed) {
    item.readings = item.readings.map((r) =>
      r.signedData === null ? r : { ...r, signatureStatus: signatureStatusOf(r.signedData, keys.get(item.chargerId), { wh: r.wh, at: r.measuredAt }) },
    );
  }
}

/**
 * The ON CONFLICT rule for signature_status: a replay adds a signature the first copy lacked, with its verdict; a
 * reading that is signed already keeps its signature and its verdict.
 */
export const keepSignatureStatus = sql<SignatureStatus | null>`case when meter_readings.signed_data is null then excluded.signature_status else meter_readings.signature_status end`;
