// Set-based writing of the common transaction message, for the ingest pipeline's batches (group commit): readings
// of a known session that continue it in time order (1.6 MeterValues naming a transaction, 2.0.1
// TransactionEvent Updated without an id token). For all such messages of a batch: one read of their sessions and
// one statement that writes their readings and their sessions' energy (batch-write.ts), whatever the number of messages.
//
// It gives exactly what the one-message path gives (handle-event.ts meterValues/updated with readings.ts
// updateSessionEnergy) because it only takes what that path's incremental branch handles: the session exists,
// is not a provisionally closed one, has a register reading already, and every new register reading is later
// than its last one, so the new readings are the only ones after it and the rule of C4.5/C5.5 (readings.ts
// foldSteps: anomalies, counted and held Wh, the review columns) runs over them alone, from the session's stored
// totals, with the same clock for future_timestamp. A message that does not fit is left to the one-message path.
//
// A MeterValues naming no transaction (1.6 firmware that never names one, 2.0.1 MeterValuesRequest) belongs, by
// C4.6, to the latest session of its connector running at its readings' times. On the connector of the session its
// socket remembers it is written against that session in the remembered statement, whose guard then also checks
// that this is still so (the session is running, started at or before every reading, and no later one exists on the
// connector); otherwise the one-message path places it.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { type ChargerEvent, type EnergyReading, type EventOutcome, namedTransactionOf } from './events.ts';
import { arrivalFlag, foldSteps, mergeReadings, newReadingFlag, totalsColumns, totalsOf, type SessionEnergy } from './readings.ts';
import { registerReading } from './sessions.ts';
import { isRegister, readingRecord, type ReadingRecord } from './batch-rows.ts';
import { judgeSignatures } from './signatures.ts';
import { type Candidate, type Plan, type Update, writePlan } from './batch-write.ts';

export interface BatchItem {
  chargerId: string;
  /** the socket's memory of its session (applyRemembered), updated after each set-based write */
  cache?: { session?: SessionState } | undefined;
  /** the charger's maximum power in W, when the socket has it cached (else the item is not taken) */
  maxPowerW: number | undefined;
  ev: ChargerEvent;
}

/** Thrown inside the batch's transaction when the database showed a reading was not new: the batch is undone. */
export class BatchDiverged extends Error {
  constructor() {
    super('a reading of the batch was already stored');
  }
}

/**
 * The candidate of one item, or null when this path cannot take it. With `remembered` (applyRemembered: the
 * socket's session), a MeterValues naming no transaction on that session's connector is taken for it.
 */
function candidateOf(item: BatchItem, index: number, remembered?: SessionState): Candidate | null {
  const { ev } = item;
  if (item.maxPowerW === undefined) return null;
  let transactionId: string;
  let outcome: EventOutcome;
  let unnamedFrom: number | undefined;
  let chargerNamed = false;
  if (ev.kind === 'meter_values') {
    const named = namedTransactionOf(ev);
    if (remembered && unnamedOn(ev, remembered)) {
      transactionId = remembered.transaction_id;
      unnamedFrom = Math.min(...ev.readings.map((r) => r.measuredAt.getTime()));
    } else if (named === null) {
      return null;
    } else {
      transactionId = named;
    }
    outcome = { kind: 'ack', aside: [] };
  } else if (ev.kind === 'transaction_updated') {
    if (ev.idTag !== null) return null; // an id token needs its verdict: the one-message path
    transactionId = ev.chargerTransactionId;
    outcome = { kind: 'transaction', verdict: null, aside: [] };
    chargerNamed = true;
  } else if (ev.kind === 'transaction_ended') {
    if (ev.ref.kind === 'unknown' || ev.signed?.length) return null; // matched by connector and time / signs a reading
    const readings = mergeReadings([...ev.readings, ...registerReading(ev.endedAt, ev.meterStopWh, 'Transaction.End')]);
    if (!strictlyInTime(readings)) return null;
    return {
      index,
      chargerId: item.chargerId,
      transactionId: ev.ref.transactionId,
      maxW: item.maxPowerW,
      readings,
      outcome: { kind: 'transaction', verdict: null, aside: [] }, // the verdict is added once read
      stop: { endedAt: ev.endedAt, meterStopWh: ev.meterStopWh, reason: ev.reason, idTag: ev.idTag },
      chargerNamed: ev.ref.kind === 'charger',
    };
  } else {
    return null;
  }
  if (ev.signed?.length) return null;
  const readings = mergeReadings(ev.readings);
  if (readings.length === 0) return null;
  if (!strictlyInTime(readings)) return null;
  return { index, chargerId: item.chargerId, transactionId, maxW: item.maxPowerW, readings, outcome, chargerNamed, ...(unnamedFrom === undefined ? {} : { unnamedFrom }) };
}

/** A MeterValues naming no transaction, on the connector of the running session `s` (C4.6 may place it there). */
function unnamedOn(ev: ChargerEvent, s: SessionState): boolean {
  return ev.kind === 'meter_values' && namedTransactionOf(ev) === null && ev.connectorId === s.connector_id && s.status === 'active' && ev.readings.length > 0;
}

/** Register readings strictly one after another in the message: their order in the table is their time order. */
function strictlyInTime(readings: EnergyReading[]): boolean {
  const times = readings.filter(isRegister).map((r) => r.measuredAt.getTime());
  for (let i = 1; i < times.length; i++) if (times[i]! <= times[i - 1]!) return false;
  return true;
}

export interface SessionState extends SessionEnergy {
  id: string;
  started_at: Date;
  /** D176: the session ends at a doubtful value (migrations/0078): the one-message path continues it */
  ends_doubtful: boolean;
  /** the row version (xmin) this state was read or written as */
  x: string;
  charger_id: string;
  transaction_id: string;
  connector_id: number;
  status: string;
  end_provisional: boolean;
}

const SESSION_COLUMNS = sql`s.id, s.started_at, s.xmin::text as x, s.charger_id, s.transaction_id, s.connector_id, s.status, s.end_provisional, s.energy_wh,
  s.held_wh, s.review_status, s.review_reason, s.last_meter_wh, s.last_reading_at, s.last_power_w, s.meter_start_wh, s.ends_doubtful`;

/** The readings' anomalies as the one-message path stores them: the fold's for register readings (foldSteps). */
export function judge(readings: EnergyReading[], registers: EnergyReading[], judged: Array<{ anomaly: string | null }>, now: Date): Map<EnergyReading, string | null> {
  const anomalyOf = new Map(readings.map((r) => [r, arrivalFlag(r.measuredAt, now)]));
  registers.forEach((r, i) => anomalyOf.set(r, judged[i]!.anomaly));
  return anomalyOf;
}

/** New register readings as fold points (not stored yet: no anomaly, no review; their own flag: clock, signature). */
export const pointsOf = (registers: EnergyReading[], now: Date) =>
  registers.map((r) => ({ wh: r.wh, at: r.measuredAt.getTime(), w: r.powerW ?? null, flag: newReadingFlag(r, now), anomaly: null, review: null }));

/** The rows and session updates of the candidates whose session fits this path (the others are left out). */
function planOf(candidates: Candidate[], sessionOf: (c: Candidate) => SessionState | undefined, now: Date): Plan {
  const rows: ReadingRecord[] = [];
  const updates: Update[] = [];
  const taken: Candidate[] = [];
  for (const c of candidates) {
    const s = sessionOf(c);
    if (!s) continue; // unknown transaction: sessionOrCreate / C4.6 placement
    // a provisionally closed session may be reopened by these readings: reopenIfStillRunning
    if (s.end_provisional && s.status === 'completed') continue;
    // a 2.0.1 transaction's session that ended for good: a replay, or a new transaction under a reused id (D99)
    if (c.chargerNamed && s.status === 'completed') continue;
    // D178: a stop dated before the session began belongs to an earlier generation of a reused id (the one-message
    // path finds it), never to this one
    if (c.stop && c.stop.endedAt.getTime() < s.started_at.getTime()) continue;
    const since = s.last_reading_at;
    if (since === null || s.last_meter_wh === null || s.meter_start_wh === null) continue;
    // D176: a session ending at a doubtful value, or doubtful new values, take the one-message path: it folds the
    // session's readings from the last trusted one and records whether the session ends at a doubtful one
    if (s.ends_doubtful) continue;
    // D260: readings that all lie before the session's start may be out of its time once one after it comes: the full fold
    if (since.getTime() < s.started_at.getTime()) continue;
    const registers = c.readings.filter(isRegister);
    if (registers.some((r) => r.measuredAt.getTime() <= since.getTime())) continue; // late: the full recompute
    const points = pointsOf(registers, now);
    if (points.some((p) => p.flag !== null)) continue;
    const totals = totalsOf(s);
    const judged = foldSteps(totals, { wh: BigInt(s.last_meter_wh), at: since.getTime(), w: s.last_power_w }, points, c.maxW);
    const anomalyOf = judge(c.readings, registers, judged, now);
    for (const r of c.readings) rows.push(readingRecord(c.chargerId, s.connector_id, s.id, r, anomalyOf.get(r) ?? null));
    const last = registers[registers.length - 1];
    const lastW = last ? (last.powerW ?? null) : s.last_power_w;
    updates.push({ id: s.id, x: s.x, state: s, totals: totalsColumns(totals), lastWh: last ? last.wh.toString() : s.last_meter_wh, lastAt: last ? last.measuredAt : since, lastW, stop: c.stop, unnamedFrom: c.unnamedFrom });
    taken.push(c);
  }
  return { rows, updates, taken };
}

/**
 * Writes the items this path can take, in the caller's transaction; returns each item's outcome by index
 * (undefined = not taken: the caller runs it through the one-message path). Throws BatchDiverged when a
 * reading turned out to be stored already (the caller undoes the transaction and runs every item alone).
 */
export async function applySetBased(trx: Db, items: BatchItem[], now: Date): Promise<Array<EventOutcome | undefined>> {
  const out: Array<EventOutcome | undefined> = new Array(items.length).fill(undefined);
  const candidates = items.map((item, i) => candidateOf(item, i)).filter((c): c is Candidate => c !== null);
  if (candidates.length === 0) return out;
  await judgeSignatures(trx, candidates); // C5.5: each signed value's verdict, as storeReadings gives it

  // 1. the sessions, locked as the one-message path's update would lock them, in id order. Each is found by a probe
  // of its (charger_id, transaction_id) key, the latest generation of a reused id (D99) (LATERAL … LIMIT 1, never
  // flattened into a join), then locked through
  // its primary key: joined to the unnested keys, a table never analyzed was read whole for every batch
  const sessions = await sql<SessionState>`
    select ${SESSION_COLUMNS}
      from charging_sessions s
     where s.id = any(array(
       select f.id from unnest(${candidates.map((c) => c.chargerId)}::uuid[], ${candidates.map((c) => c.transactionId)}::text[]) as k(charger_id, transaction_id)
        cross join lateral (select f.id from charging_sessions f
                             where f.charger_id = k.charger_id and f.transaction_id = k.transaction_id
                             order by f.transaction_generation desc limit 1) f))
     order by s.id
       for update of s`.execute(trx);
  const byKey = new Map(sessions.rows.map((s) => [`${s.charger_id}|${s.transaction_id}`, s]));
  const plan = planOf(candidates, (c) => byKey.get(`${c.chargerId}|${c.transactionId}`), now);
  if (plan.taken.length === 0) return out;

  const res = await writePlan(trx, plan, now);
  if (res.stored > 0) throw new BatchDiverged();
  if (!res.ok) throw new Error('set-based batch: a session locked by this transaction changed'); // cannot happen
  remember(items, plan, res.xs);
  for (const c of plan.taken) out[c.index] = c.outcome;
  return out;
}

/**
 * The batch in one statement and no explicit transaction, when every message of it continues or stops a session
 * whose row the socket remembers from its previous set-based write (SocketCache.session, with the row's xmin): no
 * read, no BEGIN/COMMIT. The statement writes only if every session row is still that version (locked while it
 * writes); else, or when anything in the batch does not fit, it writes nothing and returns null: the caller runs
 * the batch the usual way, which reads the sessions afresh.
 */
export async function applyRemembered(db: Db, items: BatchItem[], now: Date): Promise<EventOutcome[] | null> {
  const candidates: Candidate[] = [];
  for (const [i, item] of items.entries()) {
    if (!writesRemembered(item)) return null;
    const c = candidateOf(item, i, item.cache!.session);
    if (!c || c.readings.some((r) => r.signedData !== null)) return null;
    candidates.push(c);
  }
  const plan = planOf(candidates, (c) => items[c.index]!.cache!.session, now);
  if (plan.taken.length !== items.length) return null;
  const res = await writePlan(db, plan, now);
  if (res.stored > 0 || !res.ok) {
    for (const item of items) if (item.cache) item.cache.session = undefined;
    return null;
  }
  remember(items, plan, res.xs);
  return plan.taken.map((c) => c.outcome);
}

/**
 * Whether a message continues the session its socket remembers, the case applyRemembered writes as one statement
 * (the pipeline batches these apart from the rest, ahead of slower batches such as a burst of starts; applyRemembered
 * takes only these, and declines any whose readings do not fit once planned).
 */
export function continuesRemembered(item: BatchItem): boolean {
  const s = usableSession(item);
  const { ev } = item;
  if (!s) return false;
  if (ev.kind === 'meter_values') return !ev.signed?.length && (namedTransactionOf(ev) === s.transaction_id || unnamedOn(ev, s));
  if (ev.kind === 'transaction_updated') return !ev.signed?.length && ev.idTag === null && ev.chargerTransactionId === s.transaction_id;
  return false;
}

/**
 * What applyRemembered takes: a message that continues the session its socket remembers (continuesRemembered), or
 * one that stops it (1.6 StopTransaction, 2.0.1 TransactionEvent Ended naming its transaction). Stops are not in
 * the pipeline's fast lane (continuesRemembered), but a batch of them is one statement too.
 */
export function writesRemembered(item: BatchItem): boolean {
  if (continuesRemembered(item)) return true;
  const s = usableSession(item);
  const { ev } = item;
  if (!s || ev.kind !== 'transaction_ended') return false;
  return !ev.signed?.length && ev.ref.kind !== 'unknown' && ev.ref.transactionId === s.transaction_id;
}

/** The session the item's socket remembers, when a message may be written against it (its charger's, power known). */
function usableSession(item: BatchItem): SessionState | undefined {
  const s = item.cache?.session;
  return s && s.charger_id === item.chargerId && item.maxPowerW !== undefined ? s : undefined;
}

/** Each written session as its socket now knows it (a stopped one is forgotten). */
function remember(items: BatchItem[], plan: Plan, xs: string[]): void {
  const xmin = new Map(xs.map((v) => v.split(' ') as [string, string]));
  plan.updates.forEach((u, i) => {
    const cache = items[plan.taken[i]!.index]!.cache;
    if (!cache) return;
    const x = xmin.get(u.id);
    if (u.stop || x === undefined) {
      cache.session = undefined;
      return;
    }
    const e = { ...u.totals, last_meter_wh: u.lastWh, last_reading_at: u.lastAt, last_power_w: u.lastW, meter_start_wh: u.state.meter_start_wh };
    const s = cache.session;
    // the remembered row itself is brought up to date, in place (D88); a row read from the table becomes the remembered one
    if (s === u.state && s instanceof RememberedSession) cache.session = s.advance(e, x) ? s : undefined;
    else cache.session = rememberedSession(u.state, e, x);
  });
}

/** What a session row is known by, and what no reading changes. */
type SessionIdentity = Pick<SessionState, 'id' | 'charger_id' | 'transaction_id' | 'connector_id' | 'status' | 'end_provisional' | 'started_at'>;

/** An integer column's text as a number, NaN for null; undefined when it is not a safe integer (not remembered). */
function wholeNumber(v: string | null): number | undefined {
  if (v === null) return NaN;
  const n = Number(v);
  return Number.isSafeInteger(n) && String(n) === v ? n : undefined;
}

/**
 * The session row a socket remembers between its charger's messages (D71, D88). A socket keeps it for the whole
 * session and each reading changes its energy, last register value, time, power and row version; kept as strings
 * and a Date (the row's own types) those were new objects per reading that lived until the charger's next message,
 * 30 s or more later, so every collection of the young generation copied them and then promoted them to the old
 * one. Here they are numbers in fields of one shape, overwritten in place; the SessionState view (decimal strings,
 * a Date) is made when read, by the batch that reads it, and dies young. A value that is not a safe integer is
 * never remembered (the socket forgets the session and the next batch reads the row).
 */
class RememberedSession implements SessionState {
  readonly id: string;
  readonly charger_id: string;
  readonly transaction_id: string;
  readonly connector_id: number;
  readonly status: string;
  readonly end_provisional: boolean;
  readonly meter_start_wh: string | null;
  /** D176: a set-based write never ends a session at a doubtful value (it takes none); another write changes the row version */
  readonly ends_doubtful = false;
  review_status: SessionEnergy['review_status'] = null;
  review_reason: string | null = null;
  // numbers only (NaN for null), so that each field keeps one representation and is written in place
  private energy = 0;
  private held = 0;
  private lastWh = NaN;
  private lastAt = NaN;
  private lastW = NaN;
  private xmin = 0;
  private readonly startedAt: number;

  constructor(s: SessionIdentity, meterStartWh: string | null) {
    this.id = s.id;
    this.startedAt = s.started_at.getTime();
    this.charger_id = s.charger_id;
    this.transaction_id = s.transaction_id;
    this.connector_id = s.connector_id;
    this.status = s.status;
    this.end_provisional = s.end_provisional;
    this.meter_start_wh = meterStartWh;
  }

  /** Takes the session's state after a write; false (nothing changed) when a value cannot be kept as a number. */
  advance(e: SessionEnergy, x: string): boolean {
    const energy = wholeNumber(e.energy_wh);
    const held = wholeNumber(e.held_wh);
    const lastWh = wholeNumber(e.last_meter_wh);
    const xmin = wholeNumber(x);
    if (energy === undefined || held === undefined || lastWh === undefined || xmin === undefined) return false;
    this.energy = energy;
    this.held = held;
    this.lastWh = lastWh;
    this.lastAt = e.last_reading_at === null ? NaN : e.last_reading_at.getTime();
    this.lastW = e.last_power_w ?? NaN;
    this.xmin = xmin;
    this.review_status = e.review_status;
    // the same text as before is kept as it was (a session's reasons change rarely; a join makes a new string)
    if (this.review_reason !== e.review_reason) this.review_reason = e.review_reason;
    return true;
  }

  get x(): string {
    return String(this.xmin);
  }
  get started_at(): Date {
    return new Date(this.startedAt);
  }
  get energy_wh(): string {
    return String(this.energy);
  }
  get held_wh(): string {
    return String(this.held);
  }
  get last_meter_wh(): string | null {
    return Number.isNaN(this.lastWh) ? null : String(this.lastWh);
  }
  get last_reading_at(): Date | null {
    return Number.isNaN(this.lastAt) ? null : new Date(this.lastAt);
  }
  get last_power_w(): number | null {
    return Number.isNaN(this.lastW) ? null : this.lastW;
  }
}

/**
 * The session row a socket remembers, with the state `e` as written at row version `x`; undefined when it cannot be
 * kept (a value beyond a safe integer): the socket then remembers nothing and its next batch reads the row.
 */
export function rememberedSession(s: SessionIdentity, e: SessionEnergy, x: string): SessionState | undefined {
  const r = new RememberedSession(s, e.meter_start_wh);
  return r.advance(e, x) ? r : undefined;
}
