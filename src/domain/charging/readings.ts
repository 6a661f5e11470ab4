// C4.5 meter readings: stored once by content, attached to a session, and the session's energy recomputed
// from its readings in time order (so late, out-of-order offline batches land where their timestamps say).
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { EnergyReading } from './events.ts';

export const ENERGY_REGISTER = 'Energy.Active.Import.Register';

/** Anomaly kinds the gateway writes into meter_readings.anomaly (a flagged step is held out of ERE). */
export const ANOMALY = {
  /** the register went down (meter reset, reboot, a register that restarts per transaction) */
  backwards: 'register_backwards',
  /** the step implies more power than the charger can deliver (Wh/kWh mix-up); waits for operator review */
  implausible: 'implausible_power',
} as const;

/** 10 % above the model's maximum before a step counts as implausible: timestamps are whole seconds. */
const POWER_TOLERANCE_PCT = 110n;

type Trx = Db;

/** One message may carry the same reading twice (1.6 meterStop and the end reading of transactionData): merged. */
export function mergeReadings(readings: EnergyReading[]): EnergyReading[] {
  const unique = new Map<string, EnergyReading>();
  for (const r of readings) {
    const key = `${r.measuredAt.getTime()}|${r.measurand}|${r.phase}|${r.wh}`;
    const seen = unique.get(key);
    unique.set(key, seen ? { ...seen, signedData: seen.signedData ?? r.signedData, context: seen.context ?? r.context } : r);
  }
  return [...unique.values()];
}

/** A reading as a meter_readings row. */
export function readingRow(chargerId: string, connectorId: number, sessionId: string | null, r: EnergyReading) {
  return {
    charger_id: chargerId,
    session_id: sessionId,
    connector_id: connectorId,
    measured_at: r.measuredAt,
    measurand: r.measurand,
    phase: r.phase,
    wh: r.wh.toString(),
    context: r.context,
    signed_data: r.signedData,
  };
}

/** Insert readings; a replay (same charger, connector, time, measurand, phase, value) is stored once. */
export async function storeReadings(
  trx: Trx,
  chargerId: string,
  connectorId: number,
  sessionId: string | null,
  readings: EnergyReading[],
): Promise<void> {
  // merged first: ON CONFLICT cannot touch one row twice in a statement
  readings = mergeReadings(readings);
  if (readings.length === 0) return;
  await trx
    .insertInto('meter_readings')
    .values(readings.map((r) => readingRow(chargerId, connectorId, sessionId, r)))
    .onConflict((oc) =>
      // issue 10 item 7 (migration 0051): the replay key includes the connector; two connectors with equal
      // readings at the same second are two readings
      oc.columns(['charger_id', 'connector_id', 'measured_at', 'measurand', 'phase', 'wh']).doUpdateSet({
        // a replay adds what the first copy lacked, never overwrites it
        session_id: sql`coalesce(meter_readings.session_id, excluded.session_id)`,
        signed_data: sql`coalesce(meter_readings.signed_data, excluded.signed_data)`,
        context: sql`coalesce(meter_readings.context, excluded.context)`,
      }),
    )
    .execute();
}

/** Maximum power of a charger in W: its catalog model's, else OCPP_MAX_POWER_W. */
export async function maxPowerW(trx: Trx, chargerId: string, fallbackW: number): Promise<number> {
  return (await maxPowerWOf(trx, [chargerId], fallbackW)).get(chargerId)!;
}

/** maxPowerW for many chargers in one query, by charger id. */
export async function maxPowerWOf(trx: Trx, chargerIds: string[], fallbackW: number): Promise<Map<string, number>> {
  if (chargerIds.length === 0) return new Map();
  const rows = await trx
    .selectFrom('chargers')
    .leftJoin('catalog_models', 'catalog_models.id', 'chargers.catalog_model_id')
    .select(['chargers.id', 'catalog_models.max_power_w'])
    .where('chargers.id', 'in', chargerIds)
    .execute();
  const known = new Map(rows.map((r) => [r.id, r.max_power_w]));
  return new Map(chargerIds.map((id) => [id, known.get(id) ?? fallbackW]));
}

export interface SessionEnergy {
  energy_wh: string;
  last_meter_wh: string | null;
  last_reading_at: Date | null;
  meter_start_wh: string | null;
}

interface RegisterRow {
  id: string;
  wh: string;
  measured_at: Date;
  anomaly: string | null;
}

/**
 * The forward-step rule for one register reading after the previous one: a backward step is flagged and counts 0,
 * a step above what the charger's power allows is flagged and held out, any other step counts.
 */
export function stepOf(prev: { wh: bigint; at: number }, cur: { wh: bigint; at: number }, maxW: number): { anomaly: string | null; counted: bigint } {
  const step = cur.wh - prev.wh;
  const ms = BigInt(Math.max(0, cur.at - prev.at));
  // allowed Wh = W × ms / 3.6e6, with tolerance and 1 Wh of rounding slack
  const allowed = (BigInt(maxW) * ms * POWER_TOLERANCE_PCT) / (3_600_000n * 100n) + 1n;
  if (step < 0n) return { anomaly: ANOMALY.backwards, counted: 0n };
  if (step > allowed) return { anomaly: ANOMALY.implausible, counted: 0n };
  return { anomaly: null, counted: step };
}

/**
 * The one rule of C4.5 over register readings in time order, continuing from `prev` (the last reading already
 * counted) with `energy` so far: a forward plausible step counts, a backward step is flagged and counts 0, an
 * implausible step is flagged and held out. Rows whose anomaly changes are rewritten.
 */
async function foldReadings(
  trx: Trx,
  rows: RegisterRow[],
  maxW: number,
  start: { energy: bigint; prev: { wh: bigint; at: number } | null },
): Promise<bigint> {
  let { energy, prev } = start;
  for (const r of rows) {
    const wh = BigInt(r.wh);
    const at = r.measured_at.getTime();
    let anomaly: string | null = null;
    if (prev) {
      const step = stepOf(prev, { wh, at }, maxW);
      anomaly = step.anomaly;
      energy += step.counted;
    }
    if ((r.anomaly ?? null) !== anomaly) {
      await trx.updateTable('meter_readings').set({ anomaly }).where('id', '=', r.id).execute();
    }
    prev = { wh, at };
  }
  return energy;
}

/**
 * Recompute a session from its register readings: energy = the sum of the forward steps that are plausible;
 * a backward step is flagged and counts 0 (never negative energy); an implausible step is flagged and held out.
 */
export async function recomputeSession(trx: Trx, sessionId: string, maxW: number): Promise<void> {
  const rows = await trx
    .selectFrom('meter_readings')
    .select(['id', 'wh', 'measured_at', 'anomaly'])
    .where('session_id', '=', sessionId)
    .where('measurand', '=', ENERGY_REGISTER)
    .where('phase', '=', '')
    .orderBy('measured_at')
    .orderBy('id')
    .execute();
  const energy = await foldReadings(trx, rows, maxW, { energy: 0n, prev: null });
  const first = rows[0];
  const last = rows[rows.length - 1];
  await trx
    .updateTable('charging_sessions')
    .set({
      energy_wh: energy.toString(),
      last_meter_wh: last ? last.wh : null,
      last_reading_at: last ? last.measured_at : null,
      meter_start_wh: first ? sql`coalesce(meter_start_wh, ${first.wh}::bigint)` : sql`meter_start_wh`,
      updated_at: sql`now()`,
    })
    .where('id', '=', sessionId)
    .execute();
}

/**
 * Bring a session up to date after `added` readings were stored for it, with the same result as
 * recomputeSession. The common case (every new register reading later than the session's last one) continues
 * from the stored energy_wh / last_meter_wh / last_reading_at and looks only at the new readings; anything
 * else (out of order, replayed, late, the session's first readings) falls back to the full recompute.
 * Sound because every change to a session's register readings is followed by one of these two functions,
 * so the stored state always equals the full recompute over the readings up to last_reading_at, and a
 * reading's anomaly depends only on its predecessor.
 */
export async function updateSessionEnergy(
  trx: Trx,
  sessionId: string,
  maxW: number,
  added: EnergyReading[],
  /** the session's row as read earlier in this transaction (its energy columns unchanged since), saves a read */
  known?: SessionEnergy,
): Promise<void> {
  const s =
    known ??
    (await trx
      .selectFrom('charging_sessions')
      .select(['energy_wh', 'last_meter_wh', 'last_reading_at', 'meter_start_wh'])
      .where('id', '=', sessionId)
      .executeTakeFirst());
  const since = s?.last_reading_at ?? null;
  const inOrder =
    s !== undefined &&
    since !== null &&
    s.last_meter_wh !== null &&
    s.meter_start_wh !== null &&
    added.every((r) => r.measurand !== ENERGY_REGISTER || r.phase !== '' || r.measuredAt.getTime() > since.getTime());
  if (!inOrder) return recomputeSession(trx, sessionId, maxW);
  const rows = await trx
    .selectFrom('meter_readings')
    .select(['id', 'wh', 'measured_at', 'anomaly'])
    .where('session_id', '=', sessionId)
    .where('measurand', '=', ENERGY_REGISTER)
    .where('phase', '=', '')
    .where('measured_at', '>', since)
    .orderBy('measured_at')
    .orderBy('id')
    .execute();
  const energy = await foldReadings(trx, rows, maxW, {
    energy: BigInt(s.energy_wh),
    prev: { wh: BigInt(s.last_meter_wh!), at: since.getTime() },
  });
  const last = rows[rows.length - 1];
  await trx
    .updateTable('charging_sessions')
    .set(
      last
        ? { energy_wh: energy.toString(), last_meter_wh: last.wh, last_reading_at: last.measured_at, updated_at: sql`now()` }
        : { updated_at: sql`now()` },
    )
    .where('id', '=', sessionId)
    .execute();
}
