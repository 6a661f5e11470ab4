// C4.5: a signed meter value that arrived alone (no plain value beside it) is kept as the signed value of the
// register reading with the same timestamp: in a session (the Transaction.End reading from a 1.6 meterStop, the
// Transaction.Begin one from meterStart), else on the connector. One that matches no reading is returned, and
// the edge keeps it aside with its reason (C4.11).
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { AsidePart, SignedValue } from './events.ts';
import { ENERGY_REGISTER } from './readings.ts';

export type SignedScope = { sessionId: string } | { chargerId: string; connectorId: number };

export async function placeSignedValues(trx: Db, scope: SignedScope, values: SignedValue[] | undefined): Promise<AsidePart[]> {
  const aside: AsidePart[] = [];
  for (const v of values ?? []) {
    let q = trx
      .updateTable('meter_readings')
      .set({ signed_data: v.signedData })
      .where('measured_at', '=', v.measuredAt)
      .where('measurand', '=', ENERGY_REGISTER)
      .where('phase', '=', '')
      // a reading already signed differently keeps its signature; the other one is kept aside
      .where(sql<boolean>`signed_data is null or signed_data = ${v.signedData}`);
    q = 'sessionId' in scope
      ? q.where('session_id', '=', scope.sessionId)
      : q.where('charger_id', '=', scope.chargerId).where('connector_id', '=', scope.connectorId);
    const r = await q.executeTakeFirst();
    if (Number(r.numUpdatedRows) === 0) {
      aside.push({ reason: `signed value without a plain register reading at ${v.measuredAt.toISOString()}`, part: v.part });
    }
  }
  return aside;
}
