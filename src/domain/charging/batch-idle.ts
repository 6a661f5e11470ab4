// Set-based writing of readings outside any transaction, for the ingest pipeline's batches (group commit): a 1.6
// MeterValues without a transaction id (or with 0), a 2.0.1 MeterValues, as a charger sends its idle connector's
// clock-aligned register reading between sessions, and, in a batch's transaction, a 1.6 MeterValues naming a
// transaction of which there is no session. Most of a fleet is idle most of the time, so these are a large share of
// its messages. For all such messages of a batch: one statement, whatever their number.
//
// It gives exactly what the one-message path gives (handle-event.ts meterValues) because it only takes what that path
// stores without a session: C4.6 attaches a reading without a transaction by connector and time to the session
// running on that connector then (sessions.ts sessionsAt: started at or before it, not ended before it), as it does a
// reading naming a transaction of which there is no session; connector 0 is station-level and attached to none. The
// statement leaves out every message with a reading that falls in a session or naming a transaction that has one:
// the one-message path places them. Each reading is stored as storeReadings stores it (session none, the arrival
// flag as its anomaly, a replay by the same rule).
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { EventOutcome } from './events.ts';
import { arrivalFlag, mergeReadings } from './readings.ts';
import { KEEP_STORED_READING, readingColumns, readingRecord, type ReadingRecord, readingsCte } from './batch-rows.ts';
import type { BatchItem } from './batch.ts';

/**
 * The rows of an item this path takes, or null (a signed value, no reading, or a named transaction when `named` is
 * off); with the transaction it names, whose session the statement looks for.
 */
function rowsOf(item: BatchItem, now: Date, named: boolean): { rows: ReadingRecord[]; transactionId: string | null } | null {
  const { ev } = item;
  if (ev.kind !== 'meter_values') return null;
  const transactionId = ev.ref !== null && ev.ref.kind !== 'unknown' ? ev.ref.transactionId : null;
  if (transactionId !== null && !named) return null;
  if (ev.signed?.length) return null;
  const readings = mergeReadings(ev.readings);
  if (readings.length === 0 || readings.some((r) => r.signedData !== null)) return null;
  return { rows: readings.map((r) => readingRecord(item.chargerId, ev.connectorId, null, r, arrivalFlag(r.measuredAt, now))), transactionId };
}

/**
 * Writes the readings of the items this path takes in one statement (atomic on its own; in the caller's transaction
 * when it has one) and returns each written item's outcome by index (undefined = not written: the caller runs it
 * through the one-message path). A message with a reading that falls in a session, or naming a transaction that has
 * one, is not written (the one-message path places it). With `all` (a batch without a transaction): null, and no
 * statement, unless every item is one this path takes without naming a transaction (a named one mostly has its
 * session: that batch goes the transaction's way, which reads the sessions first), and null, with nothing written,
 * when any of them falls in a session.
 */
export async function applyIdleReadings(db: Db, items: BatchItem[], now: Date, all: boolean): Promise<Array<EventOutcome | undefined> | null> {
  const out: Array<EventOutcome | undefined> = new Array(items.length).fill(undefined);
  const rows: ReadingRecord[] = [];
  const named: Array<{ charger_id: string; transaction_id: string }> = [];
  const taken: number[] = [];
  for (const [i, item] of items.entries()) {
    const r = rowsOf(item, now, !all);
    if (r === null) {
      if (all) return null;
      continue;
    }
    rows.push(...r.rows);
    if (r.transactionId !== null) named.push({ charger_id: item.chargerId, transaction_id: r.transactionId });
    taken.push(i);
  }
  if (taken.length === 0) return all ? null : out;
  // a batch holds one message per charger, so a charger names its message
  const res = await sql<{ covered: string[] }>`
    with ${readingsCte(rows)},
    covered as (
      -- C4.6: a reading on a connector while a session of it runs belongs to that session (sessionsAt)
      select distinct r.charger_id from r
       where r.connector_id > 0
         and exists (select 1 from charging_sessions s
                      where s.charger_id = r.charger_id and s.connector_id = r.connector_id
                        and s.started_at <= r.measured_at and (s.ended_at is null or s.ended_at >= r.measured_at))
      ${
        named.length === 0
          ? sql``
          : sql`union
      -- a named transaction that has a session: the readings are that session's
      select n.charger_id from json_to_recordset(${JSON.stringify(named)}::json) as n(charger_id uuid, transaction_id text)
       where exists (select 1 from charging_sessions s where s.charger_id = n.charger_id and s.transaction_id = n.transaction_id)`
      }
    ),
    readings as (
      insert into meter_readings (charger_id, session_id, connector_id, measured_at, measurand, phase, wh, context, signed_data, signature_status, anomaly, power_w)
      select ${readingColumns(sql.ref('r.session_id'))} from r
       where ${all ? sql`not exists (select 1 from covered)` : sql`r.charger_id not in (select charger_id from covered)`}
      ${KEEP_STORED_READING}
      returning 1
    )
    select coalesce((select json_agg(charger_id) from covered), '[]') as covered, (select count(*) from readings) as written`.execute(db);
  const covered = new Set(res.rows[0]?.covered ?? []);
  if (all && covered.size > 0) return null;
  for (const i of taken) if (!covered.has(items[i]!.chargerId)) out[i] = { kind: 'ack', aside: [] };
  return out;
}
