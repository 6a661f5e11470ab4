// C2.4 / C6.4: the one write path for monthly energy. POST /v1/sessions:batch (source 'cpo') and the OCPP
// aggregation job (source 'ocpp', C4.7) both record a (connection, month) total here.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Deps } from '../../deps.ts';
import { divRound, formatDec, toDec } from '../../lib/decimal.ts';
import { isMonth, monthOf } from '../../lib/amsterdam-time.ts';

export type RecordStatus = 'created' | 'updated' | 'unchanged' | 'rejected';
export type RecordError =
  | 'connection_not_found'
  | 'connection_not_active'
  | 'month_in_future'
  | 'invalid_month'
  | 'invalid_kwh'
  | 'ere_booked';

export interface RecordEnergyInput {
  connectionId: string;
  month: unknown;
  /** kWh as the client sent it (number ≥ 0); rounded half away from zero to 2 decimals */
  kwh?: unknown;
  /** or exact integer Wh (the OCPP aggregation) */
  wh?: bigint;
  source: 'cpo' | 'ocpp';
  sessions?: number;
}

export interface RecordEnergyResult {
  status: RecordStatus;
  error?: RecordError;
  /** the stored kWh at 2 decimals, as a decimal string (null when the input had no usable kWh) */
  kwh: string | null;
  energyMonthId?: string;
}

/** numeric(14,2) holds up to 999,999,999,999.99 */
const MAX_KWH_UNITS = 99_999_999_999_999n;

/** kWh input → units of 0.01 kWh, or null when it is not a finite number ≥ 0. */
export function parseKwh(kwh: unknown): bigint | null {
  if (typeof kwh !== 'number' || !Number.isFinite(kwh) || kwh < 0) return null;
  const units = toDec(kwh, 2);
  return units > MAX_KWH_UNITS ? null : units;
}

/** Wh → units of 0.01 kWh (10 Wh), rounded half away from zero. */
export const whToKwhUnits = (wh: bigint): bigint => divRound(wh, 10n);

export function reject(error: RecordError, kwh: string | null): RecordEnergyResult {
  return { status: 'rejected', error, kwh };
}

/**
 * Record a monthly total. Idempotent per (connection, month): the same kWh (2 decimals) → unchanged; another kWh
 * → updated, unless the month is registered as ERE → rejected ere_booked (C6.4). Race-safe: the connection row is
 * read FOR SHARE, then INSERT … ON CONFLICT DO NOTHING, then the existing row is read FOR UPDATE, so concurrent
 * posts of one item leave one row and none lands on a connection archived meanwhile.
 */
/** The checks of an input before any row is read: its month and its kWh (in this order). */
export function checkRecordInput(
  deps: Pick<Deps, 'clock'>,
  input: Pick<RecordEnergyInput, 'month' | 'kwh' | 'wh'>,
): { ok: true; month: string; units: bigint; kwh: string } | { ok: false; result: RecordEnergyResult } {
  const units = input.wh !== undefined ? (input.wh >= 0n ? whToKwhUnits(input.wh) : null) : parseKwh(input.kwh);
  const kwh = units === null ? null : formatDec(units, 2);
  if (!isMonth(input.month)) return { ok: false, result: reject('invalid_month', kwh) };
  if (input.month > monthOf(deps.clock())) return { ok: false, result: reject('month_in_future', kwh) };
  if (units === null || kwh === null) return { ok: false, result: reject('invalid_kwh', null) };
  return { ok: true, month: input.month, units, kwh };
}

export async function recordMonthlyEnergy(deps: Deps, input: RecordEnergyInput): Promise<RecordEnergyResult> {
  const checked = checkRecordInput(deps, input);
  if (!checked.ok) return checked.result;
  const { month, units, kwh } = checked;
  const sessions = Math.max(0, Math.trunc(input.sessions ?? 0));
  const wh = input.wh !== undefined ? input.wh.toString() : null;

  const work = async (db: Db): Promise<RecordEnergyResult> => {
    // issue 10 item 7: the connection is checked in the transaction that writes its month, its row read FOR
    // SHARE: an archive committed since the caller resolved the target is seen (connection_not_active), and one
    // that comes later waits for this write to commit. Lock order everywhere: the connection row, then its
    // months (connections:update does the same), so batches, corrections and archives never deadlock.
    const conn = await db.selectFrom('connections').select(['id', 'status']).where('id', '=', input.connectionId).forShare().executeTakeFirst();
    if (!conn) return reject('connection_not_found', kwh);
    if (conn.status !== 'active') return reject('connection_not_active', kwh);
    const now = deps.clock();
    const inserted = await db
      .insertInto('energy_months')
      .values({ connection_id: input.connectionId, month, kwh, wh, sessions, source: input.source, created_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['connection_id', 'month']).doNothing())
      .returning('id')
      .executeTakeFirst();
    if (inserted) return { status: 'created', kwh, energyMonthId: inserted.id };

    const row = await db
      .selectFrom('energy_months')
      .select(['id', 'kwh', 'wh', 'sessions', 'status', 'source'])
      .where('connection_id', '=', input.connectionId)
      .where('month', '=', month)
      .forUpdate()
      .executeTakeFirstOrThrow();
    const same = toDec(row.kwh, 2) === units;
    if (row.status === 'registered') {
      // C6.4: a registered month is never changed; the same kWh again is a safe retry.
      return same ? { status: 'unchanged', kwh, energyMonthId: row.id } : reject('ere_booked', kwh);
    }
    if (same) {
      // The kWh stands; keep the exact Wh and session count of the latest delivery (no review restart).
      if ((wh !== null && row.wh !== wh) || (input.sessions !== undefined && row.sessions !== sessions)) {
        await db
          .updateTable('energy_months')
          .set({ ...(wh !== null ? { wh } : {}), ...(input.sessions !== undefined ? { sessions } : {}), updated_at: now })
          .where('id', '=', row.id)
          .execute();
      }
      return { status: 'unchanged', kwh, energyMonthId: row.id };
    }
    // New figures restart the review: an in_review or rejected month goes back to delivered.
    await db
      .updateTable('energy_months')
      .set({
        kwh,
        wh,
        sessions: input.sessions !== undefined ? sessions : row.sessions,
        source: input.source,
        status: 'delivered',
        updated_at: now,
        review_started_at: sql`null`,
        rejected_at: sql`null`,
      } as never)
      .where('id', '=', row.id)
      .execute();
    return { status: 'updated', kwh, energyMonthId: row.id };
  };

  if (deps.db.isTransaction) return work(deps.db);
  return deps.db.transaction().execute(work);
}
