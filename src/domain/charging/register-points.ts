// The register series of sessions as the ERE counting rule (ere/counting.ts) reads it: the phase-less
// Energy.Active.Import.Register readings in time order, each marked whether the step ending at it is held out of
// ERE. Which steps are held is the gateway's step rule (readings.ts); it is applied here and nowhere else.
import type { Db } from '../../db/database.ts';
import type { RegisterPoint } from '../ere/counting.ts';
import { ENERGY_REGISTER, stepCounts } from './readings.ts';

/** Register points of the given sessions, by session id (sessions without readings are absent). */
export async function registerPointsOf(db: Db, sessionIds: string[]): Promise<Map<string, RegisterPoint[]>> {
  const out = new Map<string, RegisterPoint[]>();
  if (sessionIds.length === 0) return out;
  const rows = await db
    .selectFrom('meter_readings')
    .select(['session_id', 'measured_at', 'wh', 'anomaly', 'review'])
    .where('session_id', 'in', [...new Set(sessionIds)])
    .where('measurand', '=', ENERGY_REGISTER)
    .where('phase', '=', '')
    .orderBy('session_id')
    .orderBy('measured_at')
    .orderBy('id')
    .execute();
  for (const r of rows) {
    const list = out.get(r.session_id!) ?? out.set(r.session_id!, []).get(r.session_id!)!;
    // C5.5: the step ending at a flagged reading is held out of ERE until an operator accepts it
    list.push({ at: r.measured_at, wh: BigInt(r.wh), held: !stepCounts(r.anomaly, r.review) });
  }
  return out;
}

export interface RegisterSpan {
  /** the first and the last register reading of the session */
  first: Date;
  last: Date;
  /** the session's counted energy as the gateway keeps it: the same counted steps as registerPointsOf's */
  energyWh: bigint;
}

/**
 * The span of each session's register readings and its counted energy, in one grouped query: a session wholly
 * after the signing moment counts its energy_wh whole, so its points need not be read (GET /chargers is polled often).
 */
export async function registerSpansOf(db: Db, sessionIds: string[]): Promise<Map<string, RegisterSpan>> {
  if (sessionIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('charging_sessions as s')
    .innerJoin('meter_readings as r', 'r.session_id', 's.id')
    .select(['s.id', 's.energy_wh', (eb) => eb.fn.min('r.measured_at').as('first'), (eb) => eb.fn.max('r.measured_at').as('last')])
    .where('s.id', 'in', [...new Set(sessionIds)])
    .where('r.measurand', '=', ENERGY_REGISTER)
    .where('r.phase', '=', '')
    .groupBy(['s.id', 's.energy_wh'])
    .execute();
  return new Map(rows.map((r) => [r.id, { first: new Date(r.first), last: new Date(r.last), energyWh: BigInt(r.energy_wh) }]));
}
