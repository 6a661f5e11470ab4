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
import { FIRST_COMPLIANCE_YEAR } from '../../../schemas/http/ere-position.ts';
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
  // past what the column holds before converting: from 1e21 on a number has no plain decimal text to convert
  if (kwh >= 1e12) return null;
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
  // a month before the first compliance year earns no ERE and shows in no year's position: refused, not kept unseen
  if (!isMonth(input.month) || input.month < `${FIRST_COMPLIANCE_YEAR}-01`) return { ok: false, result: reject('invalid_month', kwh) };
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
    // D205: a count left out keeps the month's own (a re-delivery), never the sessions of what the delivery replaces
    set: { ...monthFigures(config, d), sessions: d.sessions ?? (row.source === d.source ? row.sessions : 0), source: d.source },
    result: { status: 'updated', kwh, energyMonthId: row.id },
  };
}

const storedColumns = sql<StoredMonth>`id, kwh::text as kwh, wh::text as wh, sessions, status, source, held_wh::text as held_wh, hold_status`;

/** A checked delivery of one month to one connection (checkRecordInput passed). */
export interface Delivery extends MonthDelivery {
  connectionId: string;
  /** the delivered kWh at 2 decimals, as the answer names it */
  kwh: string;
}

/** Record a monthly total. Idempotent per (connection, month). */
export async function recordMonthlyEnergy(deps: Deps, input: RecordEnergyInput): Promise<RecordEnergyResult> {
  return (await recordMonthlyEnergies(deps, [input]))[0]!;
}

/** Record monthly totals, one result per input in order: each input checked, the valid ones written together. */
export async function recordMonthlyEnergies(deps: Deps, inputs: RecordEnergyInput[]): Promise<RecordEnergyResult[]> {
  const results: RecordEnergyResult[] = new Array(inputs.length);
  const valid: Array<{ i: number; d: Delivery }> = [];
  for (const [i, input] of inputs.entries()) {
    const c = checkRecordInput(deps, input);
    if (!c.ok) {
      results[i] = c.result;
      continue;
    }
    const sessions = input.sessions === undefined ? undefined : Math.max(0, Math.trunc(input.sessions));
    valid.push({ i, d: { connectionId: input.connectionId, month: c.month, units: c.units, kwh: c.kwh, wh: input.wh ?? null, sessions, source: input.source } });
  }
  const written = await writeDeliveries(deps, valid.map((v) => v.d));
  valid.forEach((v, k) => (results[v.i] = written[k]!));
  return results;
}

type Row = StoredMonth & { connection_id: string; month: string };

/**
 * The one write of monthly deliveries (POST /v1/sessions:batch, the OCPP aggregation), with a fixed number of
 * statements whatever their count, in the caller's transaction or its own: the connections read FOR SHARE in id
 * order (issue 10 item 7: an archive committed since the caller resolved its target is seen, one that comes later
 * waits for this write; batches, corrections and archives all lock the connection, then its months, so they never
 * deadlock), the new months inserted in one statement (INSERT … ON CONFLICT DO NOTHING: concurrent deliveries of
 * one month leave one row), the existing ones read FOR UPDATE in one, then decideMonthWrite per delivery in the
 * given order on the row as the deliveries before it left it, and the changed rows written in one statement (and
 * one more for rows whose kWh stand but whose exact Wh or session count changed). One result per delivery, in order.
 * Each written row's `computed_at` is the database's clock at the write, just after the aggregation read the readings
 * its figures come from in the same transaction (D124: what a registered month holds).
 */
export async function writeDeliveries(deps: Deps, deliveries: Delivery[]): Promise<RecordEnergyResult[]> {
  const results: RecordEnergyResult[] = new Array(deliveries.length);
  if (deliveries.length === 0) return results;
  const work = async (db: Db): Promise<RecordEnergyResult[]> => {
    const now = deps.clock();
    const ids = [...new Set(deliveries.map((d) => d.connectionId))].sort();
    const conns = await db.selectFrom('connections').select(['id', 'status']).where('id', 'in', ids).orderBy('id').forShare().execute();
    const statusOf = new Map(conns.map((c) => [c.id, c.status]));
    const live: Array<{ i: number; d: Delivery; key: string }> = [];
    for (const [i, d] of deliveries.entries()) {
      const st = statusOf.get(d.connectionId);
      if (st === 'active') live.push({ i, d, key: `${d.connectionId}|${d.month}` });
      else results[i] = reject(st === undefined ? 'connection_not_found' : 'connection_not_active', d.kwh);
    }
    if (live.length === 0) return results;
    // in (connection, month) order, and the given order within one key: the first of a key may create its month
    live.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.i - b.i));
    const firsts = live.filter((v, k) => k === 0 || live[k - 1]!.key !== v.key);
    const ff = firsts.map((v) => monthFigures(deps.config, v.d));
    const figuresOf = new Map(firsts.map((v, k) => [v.key, ff[k]!]));
    const created = await sql<{ id: string; connection_id: string; month: string }>`
      insert into energy_months (connection_id, month, kwh, wh, sessions, source, held_wh, hold_reason, hold_status, created_at, updated_at, computed_at)
      select c, m, k::numeric, w::bigint, s, src, h::bigint, hr, hs, ${now}::timestamptz, ${now}::timestamptz, clock_timestamp()
        from unnest(${firsts.map((v) => v.d.connectionId)}::uuid[], ${firsts.map((v) => v.d.month)}::text[], ${ff.map((f) => f.kwh)}::text[],
                    ${ff.map((f) => f.wh)}::text[], ${firsts.map((v) => v.d.sessions ?? 0)}::int[], ${firsts.map((v) => v.d.source)}::text[],
                    ${ff.map((f) => f.held_wh)}::text[], ${ff.map((f) => f.hold_reason)}::text[], ${ff.map((f) => f.hold_status)}::text[])
             as u(c, m, k, w, s, src, h, hr, hs)
      on conflict (connection_id, month) do nothing
      returning id, connection_id, month`.execute(db);
    const createdIds = new Map(created.rows.map((r) => [`${r.connection_id}|${r.month}`, r.id]));
    // each month as the deliveries so far left it (a created one is filled in by its first delivery below)
    const rows = new Map<string, StoredMonth & { hold_reason?: string | null }>();
    const others = firsts.filter((v) => !createdIds.has(v.key));
    if (others.length > 0) {
      const existing = await sql<Row>`
        select e.connection_id, e.month, ${storedColumns}
          from energy_months e
          join unnest(${others.map((v) => v.d.connectionId)}::uuid[], ${others.map((v) => v.d.month)}::text[]) as u(c, m)
            on e.connection_id = u.c and e.month = u.m
         order by e.connection_id, e.month
           for update of e`.execute(db);
      for (const r of existing.rows) rows.set(`${r.connection_id}|${r.month}`, r);
    }
    // the rules, per delivery in order on the row as the deliveries before it left it; what each changed month needs
    // written ('update' = new figures, 'touch' = only its exact Wh or session count)
    const write = new Map<string, 'update' | 'touch'>();
    for (const v of live) {
      const row = rows.get(v.key);
      if (row === undefined && createdIds.has(v.key)) {
        const f = figuresOf.get(v.key)!; // this delivery created it
        const id = createdIds.get(v.key)!;
        rows.set(v.key, { id, kwh: f.kwh, wh: f.wh, sessions: v.d.sessions ?? 0, status: 'delivered', source: v.d.source, held_wh: f.held_wh, hold_status: f.hold_status });
        results[v.i] = { status: 'created', kwh: v.d.kwh, energyMonthId: id };
        continue;
      }
      const w = decideMonthWrite(deps.config, row!, v.d);
      if (w.write !== 'none') {
        rows.set(v.key, { ...row!, ...w.set, ...(w.write === 'update' ? { status: 'delivered' } : {}) });
        write.set(v.key, w.write === 'update' || write.get(v.key) === 'update' ? 'update' : 'touch');
      }
      results[v.i] = w.result;
    }
    const changed = (kind: 'update' | 'touch') => [...write].filter(([, k]) => k === kind).map(([key]) => rows.get(key)!);
    const list = changed('update');
    if (list.length > 0) {
      await sql`
        update energy_months e
           set kwh = u.k::numeric, wh = u.w::bigint, sessions = u.s, source = u.src, held_wh = u.h::bigint, hold_reason = u.hr, hold_status = u.hs,
               status = 'delivered', updated_at = ${now}::timestamptz, review_started_at = null, rejected_at = null, computed_at = clock_timestamp()
          from unnest(${list.map((r) => r.id)}::uuid[], ${list.map((r) => r.kwh)}::text[], ${list.map((r) => r.wh)}::text[], ${list.map((r) => r.sessions)}::int[],
                      ${list.map((r) => r.source)}::text[], ${list.map((r) => r.held_wh)}::text[], ${list.map((r) => r.hold_reason ?? null)}::text[],
                      ${list.map((r) => r.hold_status)}::text[]) as u(id, k, w, s, src, h, hr, hs)
         where e.id = u.id`.execute(db);
    }
    const touches = changed('touch');
    if (touches.length > 0) {
      await sql`
        update energy_months e set wh = u.w::bigint, sessions = u.s, updated_at = ${now}::timestamptz, computed_at = clock_timestamp()
          from unnest(${touches.map((r) => r.id)}::uuid[], ${touches.map((r) => r.wh)}::text[], ${touches.map((r) => r.sessions)}::int[]) as u(id, w, s)
         where e.id = u.id`.execute(db);
    }
    return results;
  };
  if (deps.db.isTransaction) return work(deps.db);
  return deps.db.transaction().execute(work);
}
