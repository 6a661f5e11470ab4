// Set-based writing of the common transaction message, for the ingest pipeline's batches (group commit): readings
// of a known session that continue it in time order (1.6 MeterValues naming a transaction, 2.0.1
// TransactionEvent Updated without an id token). For all such messages of a batch: one read of their sessions and
// one statement that writes their readings and their sessions' energy, whatever the number of messages.
//
// It gives exactly what the one-message path gives (handle-event.ts meterValues/updated with readings.ts
// updateSessionEnergy) because it only takes what that path's incremental branch handles: the session exists,
// is not a provisionally closed one, has a register reading already, and every new register reading is later
// than its last one, so the new readings are the only ones after it and the forward-step rule (stepOf, shared
// with readings.ts) runs over them alone. A message that does not fit is left to the one-message path.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { ChargerEvent, EnergyReading, EventOutcome } from './events.ts';
import { ENERGY_REGISTER, mergeReadings, readingRow, stepOf } from './readings.ts';

export interface BatchItem {
  chargerId: string;
  /** the charger's maximum power in W, when the socket has it cached (else the item is not taken) */
  maxPowerW: number | undefined;
  ev: ChargerEvent;
}

interface Candidate {
  index: number;
  chargerId: string;
  transactionId: string;
  maxW: number;
  readings: EnergyReading[];
  outcome: EventOutcome;
}

/** Thrown inside the batch's transaction when the database showed a reading was not new: the batch is undone. */
export class BatchDiverged extends Error {
  constructor() {
    super('a reading of the batch was already stored');
  }
}

const isRegister = (r: EnergyReading) => r.measurand === ENERGY_REGISTER && r.phase === '';

function candidateOf(item: BatchItem, index: number): Candidate | null {
  const { ev } = item;
  if (item.maxPowerW === undefined) return null;
  let transactionId: string;
  let outcome: EventOutcome;
  if (ev.kind === 'meter_values') {
    if (!ev.ref || ev.ref.kind === 'unknown') return null;
    transactionId = ev.ref.transactionId;
    outcome = { kind: 'ack', aside: [] };
  } else if (ev.kind === 'transaction_updated') {
    if (ev.idTag !== null) return null; // an id token needs its verdict: the one-message path
    transactionId = ev.chargerTransactionId;
    outcome = { kind: 'transaction', verdict: null, aside: [] };
  } else {
    return null;
  }
  if (ev.signed?.length) return null;
  const readings = mergeReadings(ev.readings);
  if (readings.length === 0) return null;
  // register readings strictly one after another: their order in the table is their time order
  const times = readings.filter(isRegister).map((r) => r.measuredAt.getTime());
  for (let i = 1; i < times.length; i++) if (times[i]! <= times[i - 1]!) return null;
  return { index, chargerId: item.chargerId, transactionId, maxW: item.maxPowerW, readings, outcome };
}

interface SessionState {
  id: string;
  charger_id: string;
  transaction_id: string;
  connector_id: number;
  status: string;
  end_provisional: boolean;
  energy_wh: string;
  last_meter_wh: string | null;
  last_reading_at: Date | null;
  meter_start_wh: string | null;
}

/**
 * Writes the items this path can take, in the caller's transaction; returns each item's outcome by index
 * (undefined = not taken: the caller runs it through the one-message path). Throws BatchDiverged when a
 * reading turned out to be stored already (the caller undoes the transaction and runs every item alone).
 */
export async function applySetBased(trx: Db, items: BatchItem[]): Promise<Array<EventOutcome | undefined>> {
  const out: Array<EventOutcome | undefined> = new Array(items.length).fill(undefined);
  const candidates = items.map(candidateOf).filter((c): c is Candidate => c !== null);
  if (candidates.length === 0) return out;

  // 1. the sessions, locked as the one-message path's update would lock them
  const sessions = await sql<SessionState>`
    select s.id, s.charger_id, s.transaction_id, s.connector_id, s.status, s.end_provisional, s.energy_wh,
           s.last_meter_wh, s.last_reading_at, s.meter_start_wh
      from charging_sessions s
      join unnest(${candidates.map((c) => c.chargerId)}::uuid[], ${candidates.map((c) => c.transactionId)}::text[]) as k(charger_id, transaction_id)
        on s.charger_id = k.charger_id and s.transaction_id = k.transaction_id
     order by s.id
       for update of s`.execute(trx);
  const byKey = new Map(sessions.rows.map((s) => [`${s.charger_id}|${s.transaction_id}`, s]));

  const rows: Array<Record<string, unknown>> = [];
  const updates: Array<{ id: string; energy: string; lastWh: string | null; lastAt: Date | null }> = [];
  const taken: Candidate[] = [];
  for (const c of candidates) {
    const s = byKey.get(`${c.chargerId}|${c.transactionId}`);
    if (!s) continue; // unknown transaction: sessionOrCreate / C4.6 placement
    // a provisionally closed session may be reopened by these readings: reopenIfStillRunning
    if (s.end_provisional && s.status === 'completed') continue;
    const since = s.last_reading_at;
    if (since === null || s.last_meter_wh === null || s.meter_start_wh === null) continue;
    const registers = c.readings.filter(isRegister);
    if (registers.some((r) => r.measuredAt.getTime() <= since.getTime())) continue; // late: the full recompute
    let energy = BigInt(s.energy_wh);
    let prev = { wh: BigInt(s.last_meter_wh), at: since.getTime() };
    const anomalyOf = new Map<EnergyReading, string | null>();
    for (const r of registers) {
      const step = stepOf(prev, { wh: r.wh, at: r.measuredAt.getTime() }, c.maxW);
      anomalyOf.set(r, step.anomaly);
      energy += step.counted;
      prev = { wh: r.wh, at: r.measuredAt.getTime() };
    }
    for (const r of c.readings) {
      rows.push({ ...readingRow(c.chargerId, s.connector_id, s.id, r), anomaly: anomalyOf.get(r) ?? null, register: isRegister(r) });
    }
    const last = registers[registers.length - 1];
    updates.push({ id: s.id, energy: energy.toString(), lastWh: last ? last.wh.toString() : s.last_meter_wh, lastAt: last ? last.measuredAt : since });
    taken.push(c);
  }
  if (taken.length === 0) return out;

  // 2. one statement writes it all: it checks that no register reading is stored already, then inserts every
  // reading and updates every session, or, when one is (the stored state is not what this path assumed), writes
  // nothing and says so; the caller then undoes the batch and lets the one-message path judge each message. That
  // never happens while the gateway's own invariant holds (only the process holding a charger's socket writes
  // its readings), and costs only a retry when it does.
  const col = <T>(f: (r: Record<string, unknown>) => T) => rows.map(f);
  const regs = rows.filter((r) => r.register);
  const res = await sql<{ stored: number }>`
    with stored as (
      select count(*)::int as n
        from unnest(${regs.map((r) => r.charger_id)}::uuid[], ${regs.map((r) => r.connector_id)}::int[],
                    ${regs.map((r) => r.measured_at)}::timestamptz[], ${regs.map((r) => r.wh)}::bigint[]) as k(charger_id, connector_id, measured_at, wh)
        join meter_readings m
          on m.charger_id = k.charger_id and m.connector_id = k.connector_id and m.measured_at = k.measured_at
         and m.measurand = ${ENERGY_REGISTER} and m.phase = '' and m.wh = k.wh
    ),
    readings as (
      insert into meter_readings (charger_id, session_id, connector_id, measured_at, measurand, phase, wh, context, signed_data, anomaly)
      select * from unnest(
        ${col((r) => r.charger_id)}::uuid[], ${col((r) => r.session_id)}::uuid[], ${col((r) => r.connector_id)}::int[],
        ${col((r) => r.measured_at)}::timestamptz[], ${col((r) => r.measurand)}::text[], ${col((r) => r.phase)}::text[],
        ${col((r) => r.wh)}::bigint[], ${col((r) => r.context)}::text[], ${col((r) => r.signed_data)}::text[],
        ${col((r) => r.anomaly)}::text[])
       where (select n from stored) = 0
      on conflict (charger_id, connector_id, measured_at, measurand, phase, wh) do update set
        session_id = coalesce(meter_readings.session_id, excluded.session_id),
        signed_data = coalesce(meter_readings.signed_data, excluded.signed_data),
        context = coalesce(meter_readings.context, excluded.context)
      returning 1
    ),
    sessions as (
      update charging_sessions s
         set energy_wh = u.energy, last_meter_wh = u.last_wh, last_reading_at = u.last_at, updated_at = now()
        from unnest(${updates.map((u) => u.id)}::uuid[], ${updates.map((u) => u.energy)}::bigint[],
                    ${updates.map((u) => u.lastWh)}::bigint[], ${updates.map((u) => u.lastAt)}::timestamptz[])
             as u(id, energy, last_wh, last_at)
       where s.id = u.id and (select n from stored) = 0
      returning 1
    )
    select (select n from stored) as stored, (select count(*) from readings) as r, (select count(*) from sessions) as s`.execute(trx);
  if ((res.rows[0]?.stored ?? 0) > 0) throw new BatchDiverged();

  for (const c of taken) out[c.index] = c.outcome;
  return out;
}
