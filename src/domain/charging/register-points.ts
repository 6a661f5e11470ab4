// The register series of sessions as the ERE counting rule (ere/counting.ts) reads it: the phase-less
// Energy.Active.Import.Register readings in time order, each marked whether the step ending at it is held out of
// ERE. Which steps are held is the gateway's step rule (readings.ts); it is applied here and nowhere else.
// A session's register readings lie between its first_reading_at and last_reading_at (migrations/0061), so every
// lookup here names those months and the planner reads only their partitions of meter_readings (D76).
import type { Db } from '../../db/database.ts';
import type { RegisterPoint } from '../ere/counting.ts';
import { foldOrder, instantValues } from './fold-order.ts';
import { ENERGY_REGISTER, readingFlag, stepCounts } from './readings.ts';

/** A session as the lookups of its readings need it: its id, its charger and the span of its register readings. */
export interface SessionSpan {
  id: string;
  charger_id: string;
  first_reading_at: Date | null;
  last_reading_at: Date | null;
  /** migrations/0064: a start value stored as the session before's reading is this session's first point, at started_at */
  started_at: Date;
  start_point_wh: string | null;
}

/** What the lookups of a session's readings need: its id, its charger and the span of its register readings. */
export type ReadingSpan = Pick<SessionSpan, 'id' | 'charger_id' | 'first_reading_at' | 'last_reading_at'>;

/** The columns of charging_sessions a SessionSpan is made of. */
export const SESSION_SPAN_COLUMNS = ['id', 'charger_id', 'first_reading_at', 'last_reading_at', 'started_at', 'start_point_wh'] as const;

/**
 * The sessions that have register readings, their chargers, and the times all of them lie between (the smallest
 * first_reading_at and the largest last_reading_at); undefined when none has a reading. A lookup of their readings
 * bounded by these times is planned over those months' partitions only, and one that names their chargers walks
 * each partition's entries of those chargers (the replay key's index) instead of probing it once per session: for a
 * connection's 48 sessions over two years, 0.3 ms instead of 7.8 (the planner took the session list for a scan).
 */
export function readingSpanOf(sessions: ReadingSpan[]): { ids: string[]; chargers: string[]; from: Date; to: Date } | undefined {
  const ids = new Set<string>();
  const chargers = new Set<string>();
  let from: Date | undefined;
  let to: Date | undefined;
  for (const s of sessions) {
    if (!s.first_reading_at || !s.last_reading_at) continue; // no register reading
    ids.add(s.id);
    chargers.add(s.charger_id);
    if (!from || s.first_reading_at < from) from = s.first_reading_at;
    if (!to || s.last_reading_at > to) to = s.last_reading_at;
  }
  return from && to ? { ids: [...ids], chargers: [...chargers], from, to } : undefined;
}

/** A register point, when its reading reached the gateway and when an operator accepted its held step (if so). */
export interface ReceivedPoint extends RegisterPoint {
  receivedAt?: Date;
  acceptedAt?: Date;
  /** its own value is flagged (readings.ts readingFlag), whether or not accepted */
  ownFlag?: boolean;
}

/**
 * Register points of the given sessions, by session id (sessions without readings are absent); with `received`,
 * each reading's arrival time and the time its held step was accepted too (what a registered month held,
 * session-credits.ts).
 */
export async function registerPointsOf(db: Db, sessions: SessionSpan[], opts: { received?: boolean } = {}): Promise<Map<string, ReceivedPoint[]>> {
  const out = new Map<string, ReceivedPoint[]>();
  const span = readingSpanOf(sessions);
  if (!span) return out;
  const rows = await db
    .selectFrom('meter_readings')
    .select(['session_id', 'measured_at', 'wh', 'anomaly', 'review', 'signature_status'])
    .$if(opts.received === true, (q) => q.select(['received_at', 'reviewed_at']))
    .where('charger_id', 'in', span.chargers)
    .where('session_id', 'in', span.ids)
    .where('measured_at', '>=', span.from)
    .where('measured_at', '<=', span.to)
    .where('measurand', '=', ENERGY_REGISTER)
    .where('phase', '=', '')
    .orderBy('session_id')
    .orderBy('measured_at')
    .orderBy('wh') // D259: two values of one instant, the lower first, as the session's fold has them
    .orderBy('id')
    .execute();
  for (const r of rows) {
    const list = out.get(r.session_id!) ?? out.set(r.session_id!, []).get(r.session_id!)!;
    // C5.5: the step ending at a flagged reading is held out of ERE until an operator accepts it
    // D176: a doubtful value not accepted is no base for the next step
    const ownFlag = readingFlag(r) !== null;
    const p: ReceivedPoint = { at: r.measured_at, wh: BigInt(r.wh), held: !stepCounts(r.anomaly, r.review), doubtful: ownFlag && r.review !== 'accepted', ownFlag };
    if ('received_at' in r) {
      p.receivedAt = r.received_at as Date;
      if (r.review === 'accepted' && r.reviewed_at) p.acceptedAt = r.reviewed_at as Date;
    }
    list.push(p);
  }
  // a start point goes in its place in time, before any reading of the same instant (as the session's fold has it)
  const withReadings = new Set(span.ids); // a Set: a user's whole history is thousands of sessions
  for (const s of sessions) {
    if (s.start_point_wh === null || !withReadings.has(s.id)) continue;
    const list = out.get(s.id) ?? out.set(s.id, []).get(s.id)!;
    const k = list.findIndex((p) => p.at.getTime() >= s.started_at.getTime());
    list.splice(k === -1 ? list.length : k, 0, { at: s.started_at, wh: BigInt(s.start_point_wh), held: false });
  }
  // D268: the values of one instant in the session fold's order (the register's value first, a start point before
  // all); D260: a reading out of its session's time goes after the others, at the time of the last one (foldOrder)
  for (const s of sessions) {
    const inTime = out.get(s.id);
    if (!inTime) continue;
    const list = instantValues(inTime, (p) => p.at.getTime(), (p) => p.wh, null, (p) => !('ownFlag' in p)).map(({ p }) => p);
    out.set(s.id, list);
    const placed = foldOrder(list, (p) => p.at.getTime(), (p) => p.wh, s.started_at.getTime());
    if (placed.some((x) => x.moved)) out.set(s.id, placed.map(({ p, moved, at }) => (moved ? { ...p, at: new Date(at) } : p)));
  }
  return out;
}

/** A session with register readings: its span, and its counted energy as the gateway keeps it (registerPointsOf's steps). */
export interface RegisterSpan extends SessionSpan {
  first_reading_at: Date;
  last_reading_at: Date;
  energyWh: bigint;
}

/**
 * The span of each session's register readings and its counted energy, from the session rows alone: a session wholly
 * after the signing moment counts its energy_wh whole, so its points need not be read (GET /chargers is polled often).
 */
export async function registerSpansOf(db: Db, sessionIds: string[]): Promise<Map<string, RegisterSpan>> {
  if (sessionIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('charging_sessions')
    .select([...SESSION_SPAN_COLUMNS, 'energy_wh'])
    .where('id', 'in', [...new Set(sessionIds)])
    .where('first_reading_at', 'is not', null)
    .where('last_reading_at', 'is not', null)
    .execute();
  return new Map(
    rows.map((r) => [r.id, { ...r, first_reading_at: r.first_reading_at!, last_reading_at: r.last_reading_at!, energyWh: BigInt(r.energy_wh) }]),
  );
}

