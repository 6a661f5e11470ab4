// Set-based writing of the starts of a batch (1.6 StartTransaction, 2.0.1 TransactionEvent Started) for the ingest
// pipeline's group commit; the readings that continue a session are in batch.ts.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import {
  AT_MS,
  isRegister,
  KEEP_STORED_READING,
  readingColumns,
  type ReadingRecord,
  readingRecord,
  readingsCte,
  rowCount,
  storedRegisters,
  type Tagged,
  type VerdictRow,
  verdictRows,
  verdictsFrom,
} from './batch-rows.ts';
import { BatchDiverged, type BatchItem, judge, pointsOf, rememberedSession, type SessionState } from './batch.ts';
import type { ChargerEvent, EnergyReading, EventOutcome } from './events.ts';
import { foldSteps, mergeReadings, newReadingFlag, noTotals, type SessionEnergy, totalsColumns } from './readings.ts';
import { registerReading } from './sessions.ts';
import { judgeSignatures } from './signatures.ts';

/** A session a batch of starts creates, as its row will be (before the database gives its id). */
interface NewSession extends SessionEnergy {
  /** the start's index in the batch */
  i: number;
  charger_id: string;
  connector_id: number;
  /** the charger's (2.0.1); a 1.6 start's comes from the sequence in the statement */
  transaction_id: string | null;
  id_tag: string | null;
  started_at: Date;
  first_reading_at: Date | null;
}

interface StartCandidate {
  index: number;
  chargerId: string;
  ev: Extract<ChargerEvent, { kind: 'transaction_started' }>;
  maxW: number;
  /** the start's readings (meterStart as Transaction.Begin first), merged */
  readings: EnergyReading[];
}

function startCandidateOf(item: BatchItem, index: number, now: Date): StartCandidate | null {
  const { ev } = item;
  if (ev.kind !== 'transaction_started' || ev.signed?.length) return null;
  const readings = mergeReadings([...registerReading(ev.startedAt, ev.meterStartWh, 'Transaction.Begin'), ...ev.readings]);
  // D176: a doubtful value (ahead of the clock) is folded by the one-message path, which records where the session ends
  if (readings.some((r) => isRegister(r) && newReadingFlag(r, now) !== null)) return null;
  const times = readings.filter(isRegister).map((r) => r.measuredAt.getTime());
  // D260: a register stamped before the start may be out of the session's time: the one-message path's fold places it
  if (times.some((t) => t < ev.startedAt.getTime())) return null;
  // more than one register reading needs the charger's power (the step rule) and a clear time order
  if (times.length > 1 && item.maxPowerW === undefined) return null;
  const sorted = [...times].sort((x, y) => x - y);
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return null;
  return { index, chargerId: item.chargerId, ev, maxW: item.maxPowerW ?? 0, readings };
}

/**
 * Writes the starts of a batch (1.6 StartTransaction, 2.0.1 TransactionEvent Started) that open a new session,
 * set-based, in the caller's transaction, exactly as handle-event.ts `started` would. A start whose session exists
 * already (a resent start) or that carries signed values is left to the one-message path (undefined). Throws
 * BatchDiverged when one of its register readings was stored already.
 *
 * One statement (writeStarts) does it all; only when it finds a start's session exists already (it then writes
 * nothing) is it run again without that start.
 */
export async function applySetBasedStarts(trx: Db, items: BatchItem[], now: Date): Promise<Array<EventOutcome | undefined>> {
  const out: Array<EventOutcome | undefined> = new Array(items.length).fill(undefined);
  let starts = startCandidates(items, now);
  if (starts.length === 0) return out;
  await judgeSignatures(trx, starts); // C5.5: each signed value's verdict, as storeReadings gives it
  // D176: a start with a doubtful value (a signature that failed) goes the one-message path, as one ahead of the clock does
  starts = starts.filter((c) => !c.readings.some((r) => isRegister(r) && newReadingFlag(r, now) !== null));
  if (starts.length === 0) return out;
  for (;;) {
    const res = await writeStarts(trx, items, starts, now, out);
    if (res === 'written') return out;
    if (res === 'stored') throw new BatchDiverged();
    starts = starts.filter((c) => !res.has(c.index));
    if (starts.length === 0) return out;
  }
}

/**
 * A batch made only of starts that open new sessions, as one statement and no explicit transaction (the statement
 * is atomic): the outcome of each, or null when the batch holds anything else or the statement wrote nothing (a
 * start's session exists already, or one of its readings is stored): the caller then runs the batch the usual way.
 */
export async function applyStartsAlone(db: Db, items: BatchItem[], now: Date): Promise<EventOutcome[] | null> {
  const starts = startCandidates(items, now);
  if (starts.length !== items.length || starts.some((c) => c.readings.some((r) => r.signedData !== null))) return null;
  const out: Array<EventOutcome | undefined> = new Array(items.length).fill(undefined);
  return (await writeStarts(db, items, starts, now, out)) === 'written' ? (out as EventOutcome[]) : null;
}

/** The items' starts this path takes, at most one per charger (the statement matches a start's rows by charger). */
function startCandidates(items: BatchItem[], now: Date): StartCandidate[] {
  const seen = new Set<string>();
  const starts: StartCandidate[] = [];
  items.forEach((item, i) => {
    const c = startCandidateOf(item, i, now);
    if (c && !seen.has(c.chargerId)) {
      seen.add(c.chargerId);
      starts.push(c);
    }
  });
  return starts;
}

/**
 * One statement writes the starts: it checks that no start's session exists yet (2.0.1: its transaction id; 1.6: a
 * resent start) and that none of their register readings is stored, then closes provisionally a session left open
 * on each connector and started before (C4.6), creates the sessions (a 1.6 start's transaction id from the
 * sequence) with their readings and energy, and reads the id-tag verdicts (a start is recorded whatever its
 * verdict). When either check fails it writes nothing and says which: the indexes of the starts whose session
 * exists, or 'stored'. On 'written', each start's outcome is set in `out` and its socket remembers its session.
 */
async function writeStarts(db: Db, items: BatchItem[], starts: StartCandidate[], now: Date, out: Array<EventOutcome | undefined>): Promise<'written' | 'stored' | Set<number>> {
  // the sessions, their readings and energy: the forward-step rule over the start's own readings in time order
  const sessions: NewSession[] = [];
  const rows: ReadingRecord[] = [];
  for (const c of starts) {
    const registers = c.readings.filter(isRegister).sort((x, y) => x.measuredAt.getTime() - y.measuredAt.getTime());
    const totals = noTotals();
    const anomalyOf = judge(c.readings, registers, foldSteps(totals, null, pointsOf(registers, now), c.maxW), now);
    const first = registers[0];
    const last = registers[registers.length - 1];
    const meterStart = c.ev.meterStartWh ?? first?.wh ?? null;
    sessions.push({
      i: c.index,
      charger_id: c.chargerId,
      connector_id: c.ev.connectorId,
      transaction_id: c.ev.chargerTransactionId,
      id_tag: c.ev.idTag,
      started_at: c.ev.startedAt,
      meter_start_wh: meterStart === null ? null : meterStart.toString(),
      ...totalsColumns(totals),
      last_meter_wh: last ? last.wh.toString() : null,
      first_reading_at: first ? first.measuredAt : null,
      last_reading_at: last ? last.measuredAt : null,
      last_power_w: last?.powerW ?? null,
    });
    for (const r of c.readings) rows.push(readingRecord(c.chargerId, c.ev.connectorId, null, r, anomalyOf.get(r) ?? null));
  }
  // the starts as one JSON parameter, times as epoch ms (batch-rows.ts says why)
  const sessionRecords = sessions.map(({ started_at, first_reading_at, last_reading_at, ...x }) => ({
    ...x,
    at: started_at.getTime(),
    first_at: first_reading_at === null ? null : first_reading_at.getTime(),
    last_at: last_reading_at === null ? null : last_reading_at.getTime(),
  }));
  const tagged: Tagged[] = starts.filter((c) => c.ev.idTag !== null).map((c) => ({ i: c.index, charger_id: c.chargerId, tag: c.ev.idTag! }));
  type Made = Pick<SessionState, 'id' | 'charger_id' | 'transaction_id' | 'x' | 'status' | 'end_provisional'>;
  const res = await sql<{ existing: number[]; stored: number; made: Made[]; verdicts: VerdictRow[] }>`
    with ${readingsCte(rows)},
    n as (
      select n.*, ${AT_MS(sql.ref('n.at'))} as started_at, ${AT_MS(sql.ref('n.first_at'))} as first_reading_at,
             ${AT_MS(sql.ref('n.last_at'))} as last_reading_at
        from json_to_recordset(${JSON.stringify(sessionRecords)}::json)
             as n(i int, charger_id uuid, connector_id int, transaction_id text, id_tag text, at bigint, meter_start_wh bigint, energy_wh bigint,
                  held_wh bigint, review_status text, review_reason text, last_meter_wh bigint, first_at bigint, last_at bigint, last_power_w int)
       ${rowCount(sessionRecords.length)}
    ),
    -- a start whose session exists already: a lateral probe per start (not EXISTS): the planner, without statistics
    -- on a fresh or growing table, took each charger for hundreds of sessions and hashed the whole table for every
    -- batch (23 ms at 50,000 sessions, and growing with it); the probe always walks the charger's own index entries
    existing as (
      select n.i from n
       cross join lateral (
         select 1 from charging_sessions s
          where s.charger_id = n.charger_id
            and case when n.transaction_id is not null then s.transaction_id = n.transaction_id
                     else s.connector_id = n.connector_id and s.started_at = n.started_at
                          and s.id_tag is not distinct from n.id_tag and s.meter_start_wh is not distinct from n.meter_start_wh end
          limit 1) e
    ),
    stored as (${storedRegisters(rows)}),
    go as (select not exists (select 1 from existing) and (select n from stored) = 0 as ok),
    -- a session left open on the connector, started before this one, is closed provisionally (C4.6) (a lateral
    -- probe per start kept from being flattened into a join by offset 0: as a join, a dozen starts already made the
    -- planner hash the whole table, like the check above)
    closed as (
      update charging_sessions s
         set status = 'completed', end_provisional = true, ended_at = coalesce(s.last_reading_at, s.started_at),
             meter_stop_wh = s.last_meter_wh, updated_at = now()
       where s.id = any(array(
         select o.id from n
          cross join lateral (
            select o.id from charging_sessions o
             where o.charger_id = n.charger_id and o.status = 'active' and o.connector_id = n.connector_id and o.started_at < n.started_at
            offset 0) o))
         and (select ok from go)
    ),
    created as (
      insert into charging_sessions (charger_id, connector_id, transaction_id, id_tag, started_at, meter_start_wh, energy_wh, held_wh,
                                     review_status, review_reason, last_meter_wh, first_reading_at, last_reading_at, last_power_w)
      -- a 1.6 start gets its transaction id from the sequence
      select n.charger_id, n.connector_id, coalesce(n.transaction_id, nextval('ocpp16_transaction_id_seq')::integer::text), n.id_tag, n.started_at,
             n.meter_start_wh, n.energy_wh, n.held_wh, n.review_status, n.review_reason, n.last_meter_wh, n.first_reading_at, n.last_reading_at, n.last_power_w
        from n
       where (select ok from go)
      returning id, charger_id, transaction_id, xmin::text as x, status, end_provisional
    ),
    readings as (
      insert into meter_readings (charger_id, session_id, connector_id, measured_at, measurand, phase, wh, context, signed_data, signature_status, anomaly, power_w)
      select ${readingColumns(sql.ref('c.id'))}
        from r
        join created c on c.charger_id = r.charger_id
      ${KEEP_STORED_READING}
      returning 1
    )
    select coalesce((select json_agg(i) from existing), '[]') as existing, (select n from stored) as stored, (select count(*) from readings) as r,
           coalesce((select json_agg(json_build_object('id', id, 'charger_id', charger_id, 'transaction_id', transaction_id, 'x', x,
                                                       'status', status, 'end_provisional', end_provisional))
                       from created), '[]') as made,
           ${verdictRows(tagged)} as verdicts`.execute(db);
  const row = res.rows[0]!;
  if (row.existing.length > 0) return new Set(row.existing);
  if (row.stored > 0) return 'stored';
  const verdicts = verdictsFrom(row.verdicts, now);
  // each socket remembers its new session as written (its next readings can then go as one statement: batch.ts)
  const made = new Map(row.made.map((m) => [m.charger_id, m]));
  starts.forEach((c, k) => {
    const m = made.get(c.chargerId);
    if (!m) throw new Error('set-based starts: a session was not created'); // cannot happen: the statement wrote all or nothing
    out[c.index] = { kind: 'transaction_started', transactionId: m.transaction_id, verdict: c.ev.idTag === null ? null : (verdicts.get(c.index) ?? 'Accepted'), aside: [] };
    const cache = items[c.index]!.cache;
    if (cache) cache.session = rememberedSession({ ...m, connector_id: c.ev.connectorId, started_at: c.ev.startedAt }, sessions[k]!, m.x);
  });
  return 'written';
}
