// The one statement that writes a plan of set-based readings (batch.ts): the readings of many messages inserted and
// their sessions' energy updated together, checked against what the plan assumed (no reading stored yet, every
// session row the version it was planned from, and for a reading naming no transaction still C4.6's session).
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { PREPARED } from '../../db/prepared.ts';
import type { EnergyReading, EventOutcome } from './events.ts';
import type { totalsColumns } from './readings.ts';
import type { SessionState } from './batch.ts';
import { RUNS_AT } from './sessions.ts';
import {
  AT_MS,
  KEEP_STORED_READING,
  readingColumns,
  type ReadingRecord,
  readingsCte,
  rowCount,
  storedRegisters,
  type VerdictRow,
  verdictRows,
  verdictsFrom,
} from './batch-rows.ts';

/** A message this path takes: its readings for one session, and what its charger is answered. */
export interface Candidate {
  index: number;
  chargerId: string;
  transactionId: string;
  maxW: number;
  readings: EnergyReading[];
  outcome: EventOutcome;
  /** a stop (1.6 StopTransaction, 2.0.1 TransactionEvent Ended): the session is ended as endSession ends it */
  stop?: { endedAt: Date; meterStopWh: bigint | null; reason: string | null; idTag: string | null };
  /** a MeterValues naming no transaction, taken for the remembered session: its earliest reading's time (C4.6) */
  unnamedFrom?: number;
  /** a 2.0.1 TransactionEvent: its transaction id is the charger's, which a charger may reuse (D99) */
  chargerNamed?: boolean;
}

/** What one session's row becomes. */
export type Update = {
  id: string;
  x: string;
  state: SessionState;
  totals: ReturnType<typeof totalsColumns>;
  lastWh: string | null;
  lastAt: Date | null;
  lastW: number | null;
  stop: Candidate['stop'];
  unnamedFrom: number | undefined;
};
/** The rows and session updates of a batch. */
export interface Plan {
  rows: ReadingRecord[];
  updates: Update[];
  taken: Candidate[];
}

/**
 * One statement writes a plan: it checks that no register reading is stored already and that every session row
 * is the version the plan was made from, then inserts every reading and updates every session; or, when either
 * check fails, writes nothing and says so. A stop's id tag gets its verdict from the same statement (the verdict
 * changes nothing written: the one-message path records a stop whatever its verdict) and its outcome carries it.
 */
export async function writePlan(db: Db, plan: Plan, now: Date): Promise<{ stored: number; ok: boolean; xs: string[] }> {
  // 2. one statement writes it all: it checks that no register reading is stored already, then inserts every
  // reading and updates every session, or, when one is (the stored state is not what this path assumed), writes
  // nothing and says so; the caller then undoes the batch and lets the one-message path judge each message. That
  // never happens while the gateway's own invariant holds (only the process holding a charger's socket writes
  // its readings), and costs only a retry when it does.
  const { rows, updates } = plan;
  const u = updates.map((x) => ({
    id: x.id,
    x: x.x,
    energy: x.totals.energy_wh,
    held: x.totals.held_wh,
    review_status: x.totals.review_status,
    review_reason: x.totals.review_reason,
    last_w: x.lastW,
    last_wh: x.lastWh,
    last_at: x.lastAt === null ? null : x.lastAt.getTime(),
    stop: x.stop !== undefined,
    ended_at: x.stop ? x.stop.endedAt.getTime() : null,
    meter_stop: x.stop?.meterStopWh == null ? null : x.stop.meterStopWh.toString(),
    reason: x.stop?.reason ?? null,
    tag: x.stop?.idTag ?? null,
    unnamed_from: x.unnamedFrom ?? null,
  }));
  // the sessions' ids as an array too: `s.id = any(…)` is an index scan whatever the planner knows of the table (joined
  // to the JSON rows alone, a table without statistics was read whole and hashed for every batch: 2.6 ms a statement
  // at 10,000 sessions, growing with the table)
  const ids = updates.map((x) => x.id);
  const tagged = plan.taken.filter((c) => c.stop?.idTag != null).map((c) => ({ i: c.index, charger_id: c.chargerId, tag: c.stop!.idTag! }));
  const res = await sql<{ stored: number; ok: boolean; xs: string; verdicts: VerdictRow[] }>`${PREPARED}
    with ${readingsCte(rows)},
    u as (
      select * from json_to_recordset(${JSON.stringify(u)}::json)
          as u(id uuid, x text, energy bigint, held bigint, review_status text, review_reason text, last_w int, last_wh bigint,
               last_at bigint, stop boolean, ended_at bigint, meter_stop bigint, reason text, tag text, unnamed_from bigint)
       ${rowCount(u.length)}
    ),
    stored as (${storedRegisters(rows)}),
    guard as (
      -- every session still the row this batch was planned from (its xmin), locked until the end of the statement;
      -- for readings naming no transaction, still the latest session of the connector, running at all their times
      select count(*) = ${updates.length} as ok from (
        select s.id from charging_sessions s
          join u on s.id = u.id
         where s.id = any(${ids}::uuid[]) and s.xmin::text = u.x
           and (u.unnamed_from is null
                or (s.status = 'active' and s.ended_at is null and ${RUNS_AT('s', AT_MS(sql.ref('u.unnamed_from')))}
                    and not exists (select 1 from charging_sessions o
                                     where o.charger_id = s.charger_id and o.connector_id = s.connector_id and o.started_at > s.started_at)))
         order by s.id
           for update of s) l
    ),
    readings as (
      insert into meter_readings (charger_id, session_id, connector_id, measured_at, measurand, phase, wh, context, signed_data, signature_status, anomaly, power_w)
      select ${readingColumns(sql.ref('r.session_id'))} from r
       where (select n from stored) = 0 and (select ok from guard)
      ${KEEP_STORED_READING}
      returning 1
    ),
    sessions as (
      update charging_sessions s
         set energy_wh = u.energy, held_wh = u.held, review_status = u.review_status, review_reason = u.review_reason,
             last_meter_wh = u.last_wh, last_reading_at = ${AT_MS(sql.ref('u.last_at'))}, last_power_w = u.last_w, metered_at = now(),
             -- a running session that stays running keeps its updated_at: no indexed column changes, so PostgreSQL
             -- can make the update heap-only (migrations/0062, D85); an ended session or a stop stamps it
             updated_at = case when u.stop or s.status <> 'active' then now() else s.updated_at end,
             -- a stop ends the session (endSession), its stop value being the meterStop or else the last reading
             status = case when u.stop then 'completed' else s.status end,
             end_provisional = case when u.stop then false else s.end_provisional end,
             ended_at = case when u.stop then ${AT_MS(sql.ref('u.ended_at'))} else s.ended_at end,
             meter_stop_wh = case when u.stop then coalesce(u.meter_stop, u.last_wh) else s.meter_stop_wh end,
             stop_reason = case when u.stop then u.reason else s.stop_reason end,
             id_tag = case when u.stop then coalesce(s.id_tag, u.tag) else s.id_tag end
        from u
       where s.id = any(${ids}::uuid[]) and s.id = u.id and (select n from stored) = 0 and (select ok from guard)
      returning s.id, s.xmin::text as x
    )
    select (select n from stored) as stored, (select ok from guard) as ok, (select count(*) from readings) as r,
           coalesce((select string_agg(id || ' ' || x, ',') from sessions), '') as xs,
           ${verdictRows(tagged)} as verdicts`.execute(db);
  const row = res.rows[0];
  const verdicts = verdictsFrom(row?.verdicts ?? [], now);
  for (const c of plan.taken) if (c.stop?.idTag != null) c.outcome = { kind: 'transaction', verdict: verdicts.get(c.index) ?? 'Accepted', aside: [] };
  return { stored: row?.stored ?? 0, ok: row?.ok ?? false, xs: row?.xs ? row.xs.split(',') : [] };
}
