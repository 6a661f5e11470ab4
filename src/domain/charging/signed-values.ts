// C4.5: a signed meter value that arrived alone (no plain value beside it) is kept as the signed value of the
// register reading with the same timestamp: in a session (the Transaction.End reading from a 1.6 meterStop, the
// Transaction.Begin one from meterStart), else on the connector. One that matches no reading is returned, and
// the edge keeps it aside with its reason (C4.11). C5.5: the signed value is judged against the reading it signs
// (signature_status), with the key registered for the reading's charger or else the key the value carries.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { AsidePart, SignedValue } from './events.ts';
import { ENERGY_REGISTER } from './readings.ts';
import { registeredKeys, signatureStatusOf } from './signatures.ts';

/**
 * A reading not signed yet, or signed with this very value. Parenthesised: a bare `a or b` ANDed to the statement's
 * other conditions read as `(… and a) or b`, which matched every charger's unsigned reading at that instant and every
 * reading anywhere carrying the same value (and, unindexed, scanned every partition).
 */
const unsignedOrSignedWith = (signedData: string) => sql<boolean>`(signed_data is null or signed_data = ${signedData})`;

export type SignedScope = { sessionId: string } | { chargerId: string; connectorId: number };

export async function placeSignedValues(trx: Db, scope: SignedScope, values: SignedValue[] | undefined): Promise<AsidePart[]> {
  const aside: AsidePart[] = [];
  for (const v of values ?? []) {
    let q = trx
      .selectFrom('meter_readings')
      .select(['id', 'charger_id', 'measured_at', 'wh'])
      .where('measured_at', '=', v.measuredAt)
      .where('measurand', '=', ENERGY_REGISTER)
      .where('phase', '=', '')
      // a reading already signed differently keeps its signature; the other one is kept aside
      .where(unsignedOrSignedWith(v.signedData));
    q = 'sessionId' in scope
      ? q.where('session_id', '=', scope.sessionId)
      : q.where('charger_id', '=', scope.chargerId).where('connector_id', '=', scope.connectorId);
    const rows = await q.execute();
    if (rows.length === 0) {
      aside.push({ reason: `signed value without a plain register reading at ${v.measuredAt.toISOString()}`, part: v.part });
      continue;
    }
    const keys = await registeredKeys(trx, rows.map((r) => r.charger_id));
    for (const r of rows) {
      const status = signatureStatusOf(v.signedData, keys.get(r.charger_id), { wh: BigInt(r.wh), at: r.measured_at });
      await trx
        .updateTable('meter_readings')
        .set({ signed_data: v.signedData, signature_status: status })
        .where('id', '=', r.id)
        .where('measured_at', '=', r.measured_at)
        .where(unsignedOrSignedWith(v.signedData))
        .execute();
    }
  }
  return aside;
}
