// A session's energy from its stored register readings: the full recompute (the forward-step rule of readings.ts
// over every reading in time order) and the incremental update that continues from the session's stored state.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { EnergyReading } from './events.ts';
import { foldOrder, instantValues } from './fold-order.ts';
import {
  ANOMALY,
  ENERGY_REGISTER,
  type FoldPoint,
  foldSteps,
  noTotals,
  readingFlag,
  type RegisterPoint,
  type ReviewDecision,
  type SessionEnergy,
  type SessionTotals,
  stepOf,
  totalsColumns,
  totalsOf,
} from './readings.ts';

type Trx = Db;

interface RegisterRow {
  id: string;
  wh: string;
  measured_at: Date;
  anomaly: string | null;
  review: ReviewDecision | null;
  power_w: number | null;
  signature_status: string | null;
}

/** A stored reading as a fold point: its own flag as readingFlag says, except D260's, which foldOrder judges anew. */
const pointOf = (r: RegisterRow): FoldPoint => ({
  wh: BigInt(r.wh),
  at: r.measured_at.getTime(),
  w: r.power_w,
  flag: readingFlag({ anomaly: r.anomaly === ANOMALY.beforeStart || r.anomaly === ANOMALY.conflict ? null : r.anomaly, signature_status: r.signature_status }),
  anomaly: r.anomaly,
  review: r.review,
});

/**
 * foldSteps over stored rows in fold order (foldOrder, from the session's start when `startedAt` is given); rows whose
 * anomaly or review changes are rewritten. `startPoint` (a session's start value kept on its row, migrations/0064) is
 * folded in its place in time, before any row of the same instant. Returns whether the session cannot be continued
 * from its last reading: it ends at a doubtful value not accepted (D176), or it has a reading out of its time (D260,
 * whose place depends on the readings after it).
 */
async function foldReadings(
  trx: Trx,
  rows: RegisterRow[],
  maxW: number,
  t: SessionTotals,
  prev: RegisterPoint | null,
  startPoint?: RegisterPoint,
  startedAt?: number,
): Promise<{ endsDoubtful: boolean; firstInPlace: RegisterPoint | undefined }> {
  const inTime: Array<FoldPoint & { row?: RegisterRow }> = rows.map((r) => ({ ...pointOf(r), row: r }));
  const at = startPoint ? inTime.findIndex((p) => p.at >= startPoint.at) : -1;
  if (startPoint) inTime.splice(at === -1 ? inTime.length : at, 0, { ...startPoint, w: null, flag: null, anomaly: null, review: null });
  // D268: of the values of one instant, the register's first; the others that differ are doubtful (register_conflict)
  const points = instantValues(inTime, (p) => p.at, (p) => p.wh, prev?.wh ?? null, (p) => p.row === undefined).map(({ p, value }) =>
    p !== value && stepOf(value, p, maxW).anomaly !== null ? { ...p, flag: p.flag ?? ANOMALY.conflict } : p,
  );
  const placed = foldOrder(points, (p) => p.at, (p) => p.wh, startedAt ?? Number.NEGATIVE_INFINITY).map(({ p, moved, at }) =>
    moved ? { ...p, at, flag: p.flag ?? ANOMALY.beforeStart } : p,
  );
  const judged = foldSteps(t, prev, placed, maxW);
  // D176: whether the last point is a doubtful value not accepted (no base for the next reading)
  const lastPoint = placed[placed.length - 1];
  const endsDoubtful = lastPoint !== undefined && lastPoint.flag !== null && judged[judged.length - 1]!.review !== 'accepted';
  const outOfTime = placed.some((p, i) => p !== points[i]);
  for (const [i, p] of placed.entries()) {
    const r = p.row;
    if (!r) continue; // the start point
    const j = judged[i]!;
    if (j.anomaly === (r.anomaly ?? null) && j.review === (r.review ?? null)) continue;
    await trx.updateTable('meter_readings').set(j).where('id', '=', r.id).where('measured_at', '=', r.measured_at).execute();
  }
  return { endsDoubtful: endsDoubtful || outOfTime, firstInPlace: placed[0] };
}

function registerRows(trx: Trx, sessionId: string) {
  return trx
    .selectFrom('meter_readings')
    .select(['id', 'wh', 'measured_at', 'anomaly', 'review', 'power_w', 'signature_status'])
    .where('session_id', '=', sessionId)
    .where('measurand', '=', ENERGY_REGISTER)
    .where('phase', '=', '')
    .orderBy('measured_at')
    // D259: two values of one instant, the lower first: a rise in no time is a step the power rule judges (held)
    .orderBy('wh')
    .orderBy('id');
}

/** A session's start (ms) and its start point (migrations/0064), when its start reading is stored as another session's. */
async function startOf(trx: Trx, sessionId: string): Promise<{ startedAt: number | undefined; point: RegisterPoint | undefined }> {
  const s = await trx.selectFrom('charging_sessions').select(['started_at', 'start_point_wh']).where('id', '=', sessionId).executeTakeFirst();
  return { startedAt: s?.started_at.getTime(), point: s && s.start_point_wh !== null ? { wh: BigInt(s.start_point_wh), at: s.started_at.getTime() } : undefined };
}

/**
 * Recompute a session from its register readings (foldSteps from nothing): energy_wh = the counted steps, held_wh
 * = the flagged steps not decided, and the review columns. The caller holds the session's row lock.
 */
export async function recomputeSession(trx: Trx, sessionId: string, maxW: number): Promise<void> {
  const rows = await registerRows(trx, sessionId).execute();
  const { startedAt, point: start } = await startOf(trx, sessionId);
  const totals = noTotals();
  const { endsDoubtful, firstInPlace } = await foldReadings(trx, rows, maxW, totals, null, start, startedAt);
  // the series' ends, the start point among them (a session whose only register point it is has it as both)
  const series = start ? [{ wh: start.wh.toString(), measured_at: new Date(start.at), power_w: null }, ...rows].sort((a, b) => a.measured_at.getTime() - b.measured_at.getTime()) : rows;
  const [first, last] = [series[0], series[series.length - 1]];
  await trx
    .updateTable('charging_sessions')
    .set({
      ...totalsColumns(totals),
      ends_doubtful: endsDoubtful,
      last_meter_wh: last ? last.wh : null,
      first_reading_at: first ? first.measured_at : null,
      last_reading_at: last ? last.measured_at : null,
      last_power_w: last ? last.power_w : null,
      // the first point of its time line (D260: a reading out of its time is not its start)
      meter_start_wh: firstInPlace ? sql`coalesce(meter_start_wh, ${firstInPlace.wh.toString()}::bigint)` : sql`meter_start_wh`,
      updated_at: sql`now()`, // whatever the status: only the group commit's batch leaves a running session's alone (D85)
      metered_at: sql`now()`,
    })
    .where('id', '=', sessionId)
    .execute();
}

/**
 * Bring a session up to date after `added` readings were stored for it, with the same result as
 * recomputeSession. The common case (every new register reading later than the session's last one) continues
 * from the stored totals / last_meter_wh / last_reading_at / last_power_w and looks only at the new readings;
 * anything else (out of order, replayed, late, the session's first readings) falls back to the full recompute.
 * Sound because every change to a session's register readings is followed by one of these two functions,
 * so the stored state always equals the full recompute over the readings up to last_reading_at, and a
 * reading's anomaly depends only on itself and its predecessor.
 * The session's row is locked before its state is read (FOR UPDATE here, or by the caller that passes `known`),
 * so an operator's review (review.ts) and an ingest never write over each other.
 */
export async function updateSessionEnergy(
  trx: Trx,
  sessionId: string,
  maxW: number,
  added: EnergyReading[],
  /** the session's row as read, locked, earlier in this transaction (its energy columns unchanged since) */
  known?: SessionEnergy & { ends_doubtful?: boolean; started_at: Date },
): Promise<void> {
  const s =
    known ??
    (await trx
      .selectFrom('charging_sessions')
      .select(['energy_wh', 'held_wh', 'review_status', 'review_reason', 'last_meter_wh', 'last_reading_at', 'last_power_w', 'meter_start_wh', 'ends_doubtful', 'started_at'])
      .where('id', '=', sessionId)
      .forUpdate()
      .executeTakeFirst());
  const since = s?.last_reading_at ?? null;
  const inOrder =
    s !== undefined &&
    since !== null &&
    s.last_meter_wh !== null &&
    s.meter_start_wh !== null &&
    // D176: a session that ends at a doubtful value continues from an earlier reading: the fold over all its readings
    // finds it (a caller's row without the column is not trusted to say)
    s.ends_doubtful === false &&
    // D260: a session whose readings all lie before its start may find them out of its time once one after it comes
    since.getTime() >= s.started_at.getTime() &&
    added.every((r) => r.measurand !== ENERGY_REGISTER || r.phase !== '' || r.measuredAt.getTime() > since.getTime());
  if (!inOrder) return recomputeSession(trx, sessionId, maxW);
  const rows = await registerRows(trx, sessionId).where('measured_at', '>', since).execute();
  const totals = totalsOf(s);
  const { endsDoubtful } = await foldReadings(trx, rows, maxW, totals, { wh: BigInt(s.last_meter_wh!), at: since.getTime(), w: s.last_power_w });
  const last = rows[rows.length - 1];
  await trx
    .updateTable('charging_sessions')
    .set(
      last
        ? { ...totalsColumns(totals), ends_doubtful: endsDoubtful, last_meter_wh: last.wh, last_reading_at: last.measured_at, last_power_w: last.power_w, updated_at: sql`now()`, metered_at: sql`now()` }
        : { updated_at: sql`now()`, metered_at: sql`now()` },
    )
    .where('id', '=', sessionId)
    .execute();
}
