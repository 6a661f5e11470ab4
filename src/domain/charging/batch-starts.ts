// Set-based writing of the starts of a batch (1.6 StartTransaction, 2.0.1 TransactionEvent Started) for the ingest
// pipeline's group commit; the readings that continue a session are in batch.ts.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { AT_MS, isRegister, KEEP_STORED_READING, readingColumns, type ReadingRecord, readingRecord, readingsCte, rowCount, storedRegisters } from './batch-rows.ts';
import { BatchDiverged, type BatchItem, judge, pointsOf, rememberedSession, type SessionState, verdictsOf } from './batch.ts';
import type { ChargerEvent, EnergyReading, EventOutcome } from './events.ts';
import { foldSteps, mergeReadings, noTotals, type SessionEnergy, totalsColumns } from './readings.ts';
import { registerReading } from './sessions.ts';
import { judgeSignatures } from './signatures.ts';

/** A session a batch of starts creates, as its row will be (before the database gives its id). */
interface NewSession extends SessionEnergy {
  charger_id: string;
  connector_id: number;
  transaction_id: string;
  id_tag: string | null;
  started_at: Date;
}

interface StartCandidate {
  index: number;
  chargerId: string;
  ev: Extract<ChargerEvent, { kind: 'transaction_started' }>;
  maxW: number;
  /** the start's readings (meterStart as Transaction.Begin first), merged */
  readings: EnergyReading[];
}

function startCandidateOf(item: BatchItem, index: number): StartCandidate | null {
  const { ev } = item;
  if (ev.kind !== 'transaction_started' || ev.signed?.length) return null;
  const readings = mergeReadings([...registerReading(ev.startedAt, ev.meterStartWh, 'Transaction.Begin'), ...ev.readings]);
  const times = readings.filter(isRegister).map((r) => r.measuredAt.getTime());
  // more than one register reading needs the charger's power (the step rule) and a clear time order
  if (times.length > 1 && item.maxPowerW === undefined) return null;
  const sorted = [...times].sort((x, y) => x - y);
  for (let i = 1; i < sorted.length; i++) if (sorted[i] === sorted[i - 1]) return null;
  return { index, chargerId: item.chargerId, ev, maxW: item.maxPowerW ?? 0, readings };
}

/**
 * Writes the starts of a batch (1.6 StartTransaction, 2.0.1 TransactionEvent Started) that open a new session,
 * set-based, in the caller's transaction, exactly as handle-event.ts `started` would: the id-tag verdicts in one
 * query, the connector's earlier open sessions closed provisionally in one, 1.6 transaction ids in one, and the
 * sessions with their readings and energy in one. A start whose session exists already (a resent start) or that
 * carries signed values is left to the one-message path (undefined). Throws BatchDiverged when one of its register
 * readings was stored already.
 */
export async function applySetBasedStarts(trx: Db, items: BatchItem[], now: Date): Promise<Array<EventOutcome | undefined>> {
  const out: Array<EventOutcome | undefined> = new Array(items.length).fill(undefined);
  let starts = items.map(startCandidateOf).filter((c): c is StartCandidate => c !== null);
  if (starts.length === 0) return out;

  // 1. a session that exists already (2.0.1: its transaction id; 1.6: a resent start) goes the one-message way
  // (the starts as one JSON parameter, times as epoch ms: batch.ts readingsCte says why)
  const probe = starts.map((c, i) => ({
    i,
    charger_id: c.chargerId,
    connector_id: c.ev.connectorId,
    tx: c.ev.chargerTransactionId,
    at: c.ev.startedAt.getTime(),
    tag: c.ev.idTag,
    mstart: c.ev.meterStartWh === null ? null : c.ev.meterStartWh.toString(),
  }));
  const existing = await sql<{ i: number }>`
    select u.i from (select p.*, ${AT_MS(sql.ref('p.at'))} as started_at
                       from json_to_recordset(${JSON.stringify(probe)}::json)
                            as p(i int, charger_id uuid, connector_id int, tx text, at bigint, tag text, mstart bigint)
                     ${rowCount(probe.length)}) u
     -- a lateral probe per start (not EXISTS): the planner, without statistics on a fresh or growing table,
     -- took each charger for hundreds of sessions and hashed the whole table for every batch (23 ms at 50,000
     -- sessions, and growing with it); the probe always walks the charger's own index entries
     cross join lateral (
       select 1 from charging_sessions s
        where s.charger_id = u.charger_id
          and case when u.tx is not null then s.transaction_id = u.tx
                   else s.connector_id = u.connector_id and s.started_at = u.started_at
                        and s.id_tag is not distinct from u.tag and s.meter_start_wh is not distinct from u.mstart end
        limit 1) e`.execute(trx);
  const taken = new Set(existing.rows.map((r) => r.i));
  starts = starts.filter((_, i) => !taken.has(i));
  if (starts.length === 0) return out;
  await judgeSignatures(trx, starts); // C5.5: each signed value's verdict, as storeReadings gives it

  // 2. the id-tag verdicts (a start is recorded whatever its verdict)
  const verdicts = await verdictsOf(
    trx,
    starts.filter((c) => c.ev.idTag !== null).map((c) => ({ index: c.index, chargerId: c.chargerId, idTag: c.ev.idTag! })),
    now,
  );

  // 3. a session left open on the connector, started before this one, is closed provisionally (C4.6)
  //    (found by a lateral probe per charger, kept from being flattened into a join by `offset 0`: as a join, a
  //    dozen starts already made the planner hash the whole table, like the check above)
  await sql`
    update charging_sessions s
       set status = 'completed', end_provisional = true, ended_at = coalesce(s.last_reading_at, s.started_at),
           meter_stop_wh = s.last_meter_wh, updated_at = now()
     where s.id = any(array(
       select o.id
         from (select p.charger_id, p.connector_id, ${AT_MS(sql.ref('p.at'))} as before
                 from json_to_recordset(${JSON.stringify(starts.map((c) => ({ charger_id: c.chargerId, connector_id: c.ev.connectorId, at: c.ev.startedAt.getTime() })))}::json)
                      as p(charger_id uuid, connector_id int, at bigint)
                ${rowCount(starts.length)}) u
        cross join lateral (
          select o.id from charging_sessions o
           where o.charger_id = u.charger_id and o.status = 'active' and o.connector_id = u.connector_id and o.started_at < u.before
          offset 0) o))`.execute(trx);

  // 4. 1.6 transaction ids, one per start that has none
  const needIds = starts.filter((c) => c.ev.chargerTransactionId === null);
  const ids =
    needIds.length === 0
      ? []
      : (await sql<{ id: number }>`select nextval('ocpp16_transaction_id_seq')::integer as id from generate_series(1, ${needIds.length})`.execute(trx)).rows.map((r) =>
          String(r.id),
        );
  const txOf = new Map(needIds.map((c, k) => [c, ids[k]!]));

  // 5. the sessions, their readings and energy: the forward-step rule over the start's own readings in time order
  const sessions: NewSession[] = [];
  const rows: ReadingRecord[] = [];
  for (const c of starts) {
    const tx = c.ev.chargerTransactionId ?? txOf.get(c)!;
    const registers = c.readings.filter(isRegister).sort((x, y) => x.measuredAt.getTime() - y.measuredAt.getTime());
    const totals = noTotals();
    const anomalyOf = judge(c.readings, registers, foldSteps(totals, null, pointsOf(registers, now), c.maxW), now);
    const first = registers[0];
    const last = registers[registers.length - 1];
    const meterStart = c.ev.meterStartWh ?? first?.wh ?? null;
    sessions.push({
      charger_id: c.chargerId,
      connector_id: c.ev.connectorId,
      transaction_id: tx,
      id_tag: c.ev.idTag,
      started_at: c.ev.startedAt,
      meter_start_wh: meterStart === null ? null : meterStart.toString(),
      ...totalsColumns(totals),
      last_meter_wh: last ? last.wh.toString() : null,
      last_reading_at: last ? last.measuredAt : null,
      last_power_w: last?.powerW ?? null,
    });
    for (const r of c.readings) rows.push(readingRecord(c.chargerId, c.ev.connectorId, null, tx, r, anomalyOf.get(r) ?? null));
    out[c.index] = { kind: 'transaction_started', transactionId: tx, verdict: c.ev.idTag === null ? null : (verdicts.get(c.index) ?? 'Accepted'), aside: [] };
  }
  const sessionRecords = sessions.map((x) => ({
    ...x,
    started_at: x.started_at.getTime(),
    last_reading_at: x.last_reading_at === null ? null : x.last_reading_at.getTime(),
  }));
  type Made = Pick<SessionState, 'id' | 'charger_id' | 'x' | 'status' | 'end_provisional'>;
  const res = await sql<{ stored: number; made: Made[] }>`
    with ${readingsCte(rows)},
    stored as (${storedRegisters(rows)}),
    created as (
      insert into charging_sessions (charger_id, connector_id, transaction_id, id_tag, started_at, meter_start_wh, energy_wh, held_wh,
                                     review_status, review_reason, last_meter_wh, last_reading_at, last_power_w)
      select n.charger_id, n.connector_id, n.transaction_id, n.id_tag, ${AT_MS(sql.ref('n.started_at'))}, n.meter_start_wh, n.energy_wh, n.held_wh,
             n.review_status, n.review_reason, n.last_meter_wh, ${AT_MS(sql.ref('n.last_reading_at'))}, n.last_power_w
        from json_to_recordset(${JSON.stringify(sessionRecords)}::json)
             as n(charger_id uuid, connector_id int, transaction_id text, id_tag text, started_at bigint, meter_start_wh bigint, energy_wh bigint,
                  held_wh bigint, review_status text, review_reason text, last_meter_wh bigint, last_reading_at bigint, last_power_w int)
       where (select n from stored) = 0
       ${rowCount(sessionRecords.length)}
      returning id, charger_id, transaction_id, xmin::text as x, status, end_provisional
    ),
    readings as (
      insert into meter_readings (charger_id, session_id, connector_id, measured_at, measurand, phase, wh, context, signed_data, signature_status, anomaly, power_w)
      select ${readingColumns(sql.ref('c.id'))}
        from r
        join created c on c.charger_id = r.charger_id and c.transaction_id = r.tx
      ${KEEP_STORED_READING}
      returning 1
    )
    select (select n from stored) as stored, (select count(*) from readings) as r,
           coalesce((select json_agg(json_build_object('id', id, 'charger_id', charger_id, 'x', x, 'status', status, 'end_provisional', end_provisional))
                       from created), '[]') as made`.execute(trx);
  if ((res.rows[0]?.stored ?? 0) > 0) throw new BatchDiverged();
  // each socket remembers its new session as written (its next readings can then go as one statement: batch.ts)
  const made = new Map((res.rows[0]?.made ?? []).map((m) => [m.charger_id, m]));
  starts.forEach((c, k) => {
    const m = made.get(c.chargerId);
    const cache = items[c.index]!.cache;
    if (m && cache) cache.session = rememberedSession({ ...m, transaction_id: sessions[k]!.transaction_id, connector_id: c.ev.connectorId }, sessions[k]!, m.x);
  });
  return out;
}
