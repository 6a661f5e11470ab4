// C2.4 / C6.4 / C4.7 / C5.5: the one write path for monthly energy and every rule of what a delivery may change.
// POST /v1/sessions:batch (source 'cpo', set-based in sessions-batch.ts) and the OCPP aggregation (source 'ocpp')
// both decide with decideMonthWrite and store the figures of monthFigures:
// - a registered month is frozen: the aggregation leaves it alone; a CPO gets 'unchanged' for the same kWh and
//   'rejected' ere_booked for another (C6.4);
// - the aggregation never overwrites a month the CPO delivered; a CPO delivery may overwrite an OCPP month;
// - the same kWh is 'unchanged' (the exact Wh and session count of the latest delivery are kept); new figures
//   restart the review (back to 'delivered');
// - energy above the connection's capacity (CONNECTION_MAX_KW × the hours of the month) is held with reason
//   connection_capacity: it does not count (kwh excludes it) until an operator accepts it (ere/review.ts).
import { sql } from 'kysely';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import type { Deps } from '../../deps.ts';
import { formatDec, toDec } from '../../lib/decimal.ts';
import { isMonth, monthOf } from '../../lib/amsterdam-time.ts';
import { deliveredUnits, holdOf, whToKwhUnits, type HoldFigures } from '../ere/capacity.ts';

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
  /** the delivered kWh at 2 decimals, as a decimal string (null when the input had no usable kWh) */
  kwh: string | null;
  energyMonthId?: string;
  /** an OCPP delivery that the rules leave alone: the month is registered, or the CPO delivered it */
  leftAlone?: 'registered' | 'cpo';
}

/** numeric(14,2) holds up to 999,999,999,999.99 */
const MAX_KWH_UNITS = 99_999_999_999_999n;

/** kWh input → units of 0.01 kWh, or null when it is not a finite number ≥ 0. */
export function parseKwh(kwh: unknown): bigint | null {
  if (typeof kwh !== 'number' || !Number.isFinite(kwh) || kwh < 0) return null;
  const units = toDec(kwh, 2);
  return units > MAX_KWH_UNITS ? null : units;
}

export function reject(error: RecordError, kwh: string | null): RecordEnergyResult {
  return { status: 'rejected', error, kwh };
}

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

/** One delivery, checked: the kWh units (2 decimals), the exact Wh when known, the session count when given. */
export interface MonthDelivery {
  month: string;
  units: bigint;
  wh: bigint | null;
  sessions?: number | undefined;
  source: 'cpo' | 'ocpp';
}

/** The figures a delivery stores: its exact Wh, and what counts with the capacity hold (ere/capacity.ts). */
export interface MonthFigures extends HoldFigures {
  wh: string | null;
}

export function monthFigures(config: Pick<Config, 'CONNECTION_MAX_KW'>, d: MonthDelivery): MonthFigures {
  return { ...holdOf(config, d.month, d.units, d.wh), wh: d.wh === null ? null : d.wh.toString() };
}

/** A stored month as the rules read it. */
export interface StoredMonth {
  id: string;
  kwh: string;
  wh: string | null;
  sessions: number;
  status: string;
  source: string;
  held_wh: string;
  hold_status: string | null;
}

export type MonthWrite =
  | { write: 'none'; result: RecordEnergyResult }
  /** the kWh stands; the exact Wh or the session count of the latest delivery changed */
  | { write: 'touch'; set: { wh?: string; sessions?: number }; result: RecordEnergyResult }
  /** new figures: stored with their hold, and the review restarts */
  | { write: 'update'; set: MonthFigures & { sessions: number; source: 'cpo' | 'ocpp' }; result: RecordEnergyResult };

/** Every precedence rule of a delivery on an existing month (see the head of this file). */
export function decideMonthWrite(config: Pick<Config, 'CONNECTION_MAX_KW'>, row: StoredMonth, d: MonthDelivery): MonthWrite {
  const kwh = formatDec(d.units, 2);
  const same = deliveredUnits(row) === d.units;
  const none = (result: Omit<RecordEnergyResult, 'kwh' | 'energyMonthId'>): MonthWrite => ({ write: 'none', result: { ...result, kwh, energyMonthId: row.id } });
  if (row.status === 'registered') {
    if (d.source === 'ocpp') return none({ status: 'unchanged', leftAlone: 'registered' }); // C4.7
    return same ? none({ status: 'unchanged' }) : { write: 'none', result: reject('ere_booked', kwh) }; // C6.4
  }
  if (d.source === 'ocpp' && row.source === 'cpo') return none({ status: 'unchanged', leftAlone: 'cpo' });
  if (same) {
    const set: { wh?: string; sessions?: number } = {};
    if (d.wh !== null && row.wh !== d.wh.toString()) set.wh = d.wh.toString();
    if (d.sessions !== undefined && row.sessions !== d.sessions) set.sessions = d.sessions;
    const result: RecordEnergyResult = { status: 'unchanged', kwh, energyMonthId: row.id };
    return Object.keys(set).length > 0 ? { write: 'touch', set, result } : { write: 'none', result };
  }
  return {
    write: 'update',
    set: { ...monthFigures(config, d), sessions: d.sessions ?? row.sessions, source: d.source },
    result: { status: 'updated', kwh, energyMonthId: row.id },
  };
}

const storedColumns = sql<StoredMonth>`id, kwh::text as kwh, wh::text as wh, sessions, status, source, held_wh::text as held_wh, hold_status`;

/**
 * Record a monthly total. Idempotent per (connection, month). Race-safe: the connection row is read FOR SHARE, then
 * INSERT … ON CONFLICT DO NOTHING, then the existing row is read FOR UPDATE, so concurrent posts of one item leave
 * one row and none lands on a connection archived meanwhile.
 */
export async function recordMonthlyEnergy(deps: Deps, input: RecordEnergyInput): Promise<RecordEnergyResult> {
  const checked = checkRecordInput(deps, input);
  if (!checked.ok) return checked.result;
  const { month, units, kwh } = checked;
  const sessions = input.sessions === undefined ? undefined : Math.max(0, Math.trunc(input.sessions));
  const delivery: MonthDelivery = { month, units, wh: input.wh ?? null, sessions, source: input.source };

  const work = async (db: Db): Promise<RecordEnergyResult> => {
    // issue 10 item 7: the connection is checked in the transaction that writes its month, its row read FOR
    // SHARE: an archive committed since the caller resolved the target is seen (connection_not_active), and one
    // that comes later waits for this write to commit. Lock order everywhere: the connection row, then its
    // months (connections:update does the same), so batches, corrections and archives never deadlock.
    const conn = await db.selectFrom('connections').select(['id', 'status']).where('id', '=', input.connectionId).forShare().executeTakeFirst();
    if (!conn) return reject('connection_not_found', kwh);
    if (conn.status !== 'active') return reject('connection_not_active', kwh);
    const now = deps.clock();
    const f = monthFigures(deps.config, delivery);
    const inserted = await sql<{ id: string }>`
      insert into energy_months (connection_id, month, kwh, wh, sessions, source, held_wh, hold_reason, hold_status, created_at, updated_at)
      values (${input.connectionId}, ${month}, ${f.kwh}::numeric, ${f.wh}::bigint, ${sessions ?? 0}, ${input.source},
              ${f.held_wh}::bigint, ${f.hold_reason}, ${f.hold_status}, ${now}::timestamptz, ${now}::timestamptz)
      on conflict (connection_id, month) do nothing
      returning id`.execute(db);
    if (inserted.rows[0]) return { status: 'created', kwh, energyMonthId: inserted.rows[0].id };

    const row = (
      await sql<StoredMonth>`select ${storedColumns} from energy_months
        where connection_id = ${input.connectionId} and month = ${month} for update`.execute(db)
    ).rows[0]!;
    const w = decideMonthWrite(deps.config, row, delivery);
    if (w.write === 'touch') await db.updateTable('energy_months').set({ ...w.set, updated_at: now }).where('id', '=', row.id).execute();
    if (w.write === 'update') {
      const s = w.set;
      await sql`update energy_months set kwh = ${s.kwh}::numeric, wh = ${s.wh}::bigint, sessions = ${s.sessions}, source = ${s.source},
          held_wh = ${s.held_wh}::bigint, hold_reason = ${s.hold_reason}, hold_status = ${s.hold_status},
          status = 'delivered', updated_at = ${now}::timestamptz, review_started_at = null, rejected_at = null
        where id = ${row.id}`.execute(db);
    }
    return w.result;
  };

  if (deps.db.isTransaction) return work(deps.db);
  return deps.db.transaction().execute(work);
}
