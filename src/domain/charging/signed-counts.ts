// C5.5 `signed: {readings, verified, invalid}` of sessions (GET /sessions): counts of their signed register readings.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { ENERGY_REGISTER } from './readings.ts';
import { readingSpanOf, type ReadingSpan } from './register-points.ts';

/** C5.5 `signed` of sessions: their signed register readings, and how many of them verified and failed. */
export interface SignedCounts {
  readings: number;
  verified: number;
  invalid: number;
}

export async function signedCountsOf(db: Db, sessions: ReadingSpan[]): Promise<Map<string, SignedCounts>> {
  const span = readingSpanOf(sessions);
  if (!span) return new Map();
  const rows = await db
    .selectFrom('meter_readings')
    .select((eb) => [
      'session_id',
      eb.fn.countAll<string>().as('readings'),
      sql<string>`count(*) filter (where signature_status = 'verified')`.as('verified'),
      sql<string>`count(*) filter (where signature_status = 'invalid')`.as('invalid'),
    ])
    .where('charger_id', 'in', span.chargers)
    .where('session_id', 'in', span.ids)
    .where('measured_at', '>=', span.from)
    .where('measured_at', '<=', span.to)
    .where('measurand', '=', ENERGY_REGISTER)
    .where('phase', '=', '')
    .where('signed_data', 'is not', null)
    .groupBy('session_id')
    .execute();
  return new Map(rows.map((r) => [r.session_id!, { readings: Number(r.readings), verified: Number(r.verified), invalid: Number(r.invalid) }]));
}

export const NOT_SIGNED: SignedCounts = Object.freeze({ readings: 0, verified: 0, invalid: 0 });
