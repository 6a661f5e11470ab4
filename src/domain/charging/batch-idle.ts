// Set-based writing of readings outside any transaction, for the ingest pipeline's batches (group commit): a 1.6
// MeterValues without a transaction id (or with 0), a 2.0.1 MeterValues, as a charger sends its idle connector's
// clock-aligned register reading between sessions, and, in a batch's transaction, a 1.6 MeterValues naming a
// transaction of which there is no session. Most of a fleet is idle most of the time, so these are a large share of
// its messages. For all such messages of a batch: one statement, whatever their number.
//
// It gives exactly what the one-message path gives (handle-event.ts meterValues) because it only takes what that path
// stores without a session: C4.6 attaches a reading without a transaction by connector and time to the session
// running on that connector then (sessions.ts runsAt: started at or before it, not ended before it), as it does a
// reading naming a transaction of which there is no session; connector 0 is station-level and attached to none. The
// statement leaves out every message with a reading that falls in a session or naming a transaction that has one, or
// whose start is in the quarantine (D262): the one-message path places them. Each reading is stored as storeReadings
// stores it (session none, the arrival flag as its anomaly, a replay by the same rule).
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { PREPARED } from '../../db/prepared.ts';
import { type EventOutcome, namedTransactionOf } from './events.ts';
import { arrivalFlag, mergeReadings } from './readings.ts';
import { KEEP_STORED_READING, readingColumns, readingRecord, type ReadingRecord, readingsCte } from './batch-rows.ts';
import type { BatchItem } from './batch.ts';
import { RUNS_AT } from './sessions.ts';

/** Whether this path takes the message at all (its kind, its reference, no signed value), before its rows are built. */
function takes(item: BatchItem, named: boolean): boolean {
  const { ev } = item;
  if (ev.kind !== 'meter_values' || ev.signed?.length) return false;
  return named || namedTransactionOf(ev) === null;
}

/**
 * The rows of an item this path takes, or null (a signed value, no reading, or a named transaction when `named` is
 * off); with the transaction it names, whose session the statement looks for.
 */
function rowsOf(item: BatchItem, now: Date, named: boolean): { rows: ReadingRecord[]; transactionId: string | null } | null {
  const { ev } = item;
  if (!takes(item, named) || ev.kind !== 'meter_values') return null;
  const transactionId = namedTransactionOf(ev);
  const readings = mergeReadings(ev.readings);
  if (readings.length === 0 || readings.some((r) => r.signedData !== null)) return null;
  return { rows: readings.map((r) => readingRecord(item.chargerId, ev.connectorId, null, r, arrivalFlag(r.measuredAt, now))), transactionId };
}

/**
 * A batch of only such messages, none naming a transaction, as one statement without a transaction: each item's
 * outcome, or null (and nothing written) when an item is not of this kind or a reading of one falls in a session;
 * then the batch goes the transaction's way (a message naming a transaction mostly has its session, which that way
 * reads first). No statement unless every item is of this kind.
 */
export async function applyIdleAlone(db: Db, items: BatchItem[], now: Date): Promise<EventOutcome[] | null> {
  const out = await writeIdle(db, items, now, true);
  return out === null ? null : out.map((o) => o!); // with `all`, every item written or none
}

/**
 * In a batch's transaction, the items this path takes that no other set-based write took (`written[i]` undefined):
 * one statement for all of them; each written item's outcome by index (undefined = not written: the caller runs it
 * through the one-message path, which places a message with a reading that falls in a session, or naming a
 * transaction that has one).
 */
export async function applySetBasedIdle(trx: Db, items: BatchItem[], now: Date, written: Array<EventOutcome | undefined>): Promise<Array<EventOutcome | undefined>> {
  return (await writeIdle(trx, items.map((item, i) => (written[i] === undefined ? item : null)), now, false))!; // never null without `all`
}

/**
 * The statement of both: with `all`, every item must be taken (none naming a transaction) and nothing is written if
 * any falls in a session (null); else the items taken (not null) that do not are written.
 */
async function writeIdle(db: Db, items: Array<BatchItem | null>, now: Date, all: boolean): Promise<Array<EventOutcome | undefined> | null> {
  // a batch of other kinds is turned down before any rows are built (the transaction's way builds them once)
  if (all && !items.every((item) => item !== null && takes(item, false))) return null;
  const out: Array<EventOutcome | undefined> = new Array(items.length).fill(undefined);
  const rows: ReadingRecord[] = [];
  const named: Array<{ charger_id: string; transaction_id: string }> = [];
  const taken: number[] = [];
  for (const [i, item] of items.entries()) {
    const r = item && rowsOf(item, now, !all);
    if (!r) {
      if (all) return null;
      continue;
    }
    rows.push(...r.rows);
    if (r.transactionId !== null) named.push({ charger_id: item!.chargerId, transaction_id: r.transactionId });
    taken.push(i);
  }
  if (taken.length === 0) return all ? null : out;
  // a batch holds one message per charger, so a charger names its message
  const res = await sql<{ covered: string[] }>`${PREPARED}
    with ${readingsCte(rows)},
    covered as (
      -- C4.6: a reading on a connector while a session of it runs belongs to that session (sessions.ts runsAt)
      select distinct r.charger_id from r
       where r.connector_id > 0
         and exists (select 1 from charging_sessions s
                      where s.charger_id = r.charger_id and s.connector_id = r.connector_id and ${RUNS_AT('s', sql`r.measured_at`)})
      ${
        named.length === 0
          ? sql``
          : sql`union
      -- a named transaction that has a session: the readings are that session's; one whose start is in the
      -- quarantine (D262): the one-message path keeps them with it
      select n.charger_id from json_to_recordset(${JSON.stringify(named)}::json) as n(charger_id uuid, transaction_id text)
       where exists (select 1 from charging_sessions s where s.charger_id = n.charger_id and s.transaction_id = n.transaction_id)
          or exists (select 1 from ocpp_quarantine q
                      where q.charger_id = n.charger_id and q.action = 'StartTransaction' and q.ack->>'transactionId' = n.transaction_id
                        and (q.replay_result is null or q.replay_result <> 'applied'))`
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
