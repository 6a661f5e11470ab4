// C4.5 meter readings: stored once by content, attached to a session, and the session's energy recomputed
// from its readings in time order (so late, out-of-order offline batches land where their timestamps say).
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { EnergyReading } from './events.ts';
import { judgeSignatures, keepSignatureStatus } from './signatures.ts';

export const ENERGY_REGISTER = 'Energy.Active.Import.Register';

/**
 * Hold reasons the gateway writes into meter_readings.anomaly: the reason of the step ending at that reading
 * (C5.5). A flagged step is held out of ERE until an operator accepts it (meter_readings.review).
 */
export const ANOMALY = {
  /** the register went down (meter reset, reboot, a register that restarts per transaction) */
  backwards: 'register_backwards',
  /** the step implies more power than the charger can deliver (Wh sent as kWh) */
  implausible: 'implausible_power',
  /** the register moved less than 1 % of what the reported Power.Active.Import delivered (kWh sent as Wh) */
  tooSlow: 'register_too_slow',
  /** the reading was stamped more than 5 minutes ahead of the gateway's clock when it arrived */
  future: 'future_timestamp',
  /** the reading's signed meter value failed verification */
  invalidSignature: 'invalid_signature',
  /**
   * D260: stamped before its session's start with a register above the session's first value at or after the start:
   * not taken before the start (a clock that fell back), so no point of the session's time line (fold-order.ts foldOrder)
   */
  beforeStart: 'before_session_start',
  /**
   * D268: another value of an instant whose register value is a different one (meterStop beside a transactionData
   * copy, a 0 for "not known", a hostile value): not the instant's value, so no base until accepted (fold-order.ts instantValues)
   */
  conflict: 'register_conflict',
} as const;

/** 10 % above the model's maximum before a step counts as implausible: timestamps are whole seconds. */
const POWER_TOLERANCE_PCT = 110n;
/** C5.5: how far ahead of the gateway's clock a reading may be stamped */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;
/** register_too_slow: the reported power must imply at least this much (a register with 100 Wh resolution never trips it) */
const TOO_SLOW_MIN_IMPLIED_WH = 100n;
/** register_too_slow: the register moved less than 1/100 of what the power implies (kWh sent as Wh moves 1/1000) */
const TOO_SLOW_FACTOR = 100n;

/**
 * C5.5, the rule of what counts, once: a register step ending at reading q counts iff the step is positive and
 * (q.anomaly is null or q.review = 'accepted'). This is the predicate; the step's sign is the caller's.
 */
export function stepCounts(anomaly: string | null, review: string | null): boolean {
  return anomaly === null || review === 'accepted';
}

/** C5.5: a reading stamped more than 5 minutes ahead of the gateway's clock when it arrives is held. */
export function arrivalFlag(measuredAt: Date, now: Date): string | null {
  return measuredAt.getTime() > now.getTime() + FUTURE_TOLERANCE_MS ? ANOMALY.future : null;
}

/** What a stored reading says about itself (not about its step). */
export interface ReadingFacts {
  /** the anomaly as stored: future_timestamp was judged once, at arrival, and stays */
  anomaly: string | null;
  /** the verdict on its signed meter value (signatures.ts), null when not signed */
  signature_status: string | null;
}

/**
 * The reasons a reading itself is held for, whatever its step, in order: the first that applies is its anomaly,
 * before the step rules of stepOf. A new hold reason of this kind is one more entry here.
 */
const READING_FLAGS: Array<(r: ReadingFacts) => string | null> = [
  (r) => (r.anomaly === ANOMALY.future ? ANOMALY.future : null),
  (r) => (r.signature_status === 'invalid' ? ANOMALY.invalidSignature : null),
  // D260: judged by the fold from the session's start each time (foldOrder); as stored, for the readers of the stored state
  (r) => (r.anomaly === ANOMALY.beforeStart ? ANOMALY.beforeStart : null),
  // D268: judged by the fold from the values of its instant each time (instantValues); as stored, for the stored state's readers
  (r) => (r.anomaly === ANOMALY.conflict ? ANOMALY.conflict : null),
];

export function readingFlag(r: ReadingFacts): string | null {
  for (const flag of READING_FLAGS) {
    const reason = flag(r);
    if (reason !== null) return reason;
  }
  return null;
}

/** readingFlag of a reading about to be stored (its signature judged, signatures.ts), at the gateway's clock `now`. */
export function newReadingFlag(r: EnergyReading, now: Date): string | null {
  return readingFlag({ anomaly: arrivalFlag(r.measuredAt, now), signature_status: r.signatureStatus ?? null });
}

type Trx = Db;

/**
 * Whether register value `v` is `precise` rounded to a power of ten (10 Wh to 1 MWh, half away from zero), and not
 * `precise` itself: a charger's kWh figure with two decimals beside its meterStart/meterStop in Wh ("200.00" kWh for
 * 200,003 Wh) is the same reading written coarser. A rounding to 10^k Wh ends in at least k zeros, so only those
 * are tried.
 */
export function isRoundingOf(v: bigint, precise: bigint): boolean {
  if (v === precise || v < 0n || precise < 0n) return false;
  let unit = 10n;
  for (let k = 1; k <= 6 && v % unit === 0n; k++, unit *= 10n) {
    if (((precise * 2n + unit) / (2n * unit)) * unit === v) return true;
  }
  return false;
}

/** One message may carry the same reading twice (1.6 meterStop and the end reading of transactionData): merged. */
export function mergeReadings(readings: EnergyReading[]): EnergyReading[] {
  const unique = new Map<string, EnergyReading>();
  for (const r of readings) {
    const key = `${r.measuredAt.getTime()}|${r.measurand}|${r.phase}|${r.wh}`;
    const seen = unique.get(key);
    const powerW = seen?.powerW ?? r.powerW;
    unique.set(key, seen ? { ...seen, signedData: seen.signedData ?? r.signedData, context: seen.context ?? r.context, ...(powerW !== undefined ? { powerW } : {}) } : r);
  }
  return [...unique.values()];
}

/** A reading as a meter_readings row. */
export function readingRow(chargerId: string, connectorId: number, sessionId: string | null, r: EnergyReading) {
  return {
    charger_id: chargerId,
    session_id: sessionId,
    connector_id: connectorId,
    measured_at: r.measuredAt,
    measurand: r.measurand,
    phase: r.phase,
    wh: r.wh.toString(),
    context: r.context,
    signed_data: r.signedData,
    signature_status: r.signatureStatus ?? null,
    power_w: r.powerW ?? null,
  };
}

/**
 * Insert readings; a replay (same charger, connector, time, measurand, phase, value) is stored once. `now` is the
 * gateway's clock: a reading stamped more than 5 minutes ahead of it is stored flagged (arrivalFlag).
 */
export async function storeReadings(
  trx: Trx,
  chargerId: string,
  connectorId: number,
  sessionId: string | null,
  readings: EnergyReading[],
  now: Date,
): Promise<number> {
  // merged first: ON CONFLICT cannot touch one row twice in a statement
  readings = mergeReadings(readings);
  if (readings.length === 0) return 0;
  // C5.5: each signed value's verdict, stored with it
  const judged = { chargerId, readings };
  await judgeSignatures(trx, [judged]);
  readings = judged.readings;
  const written = await trx
    .insertInto('meter_readings')
    .values(readings.map((r) => ({ ...readingRow(chargerId, connectorId, sessionId, r), anomaly: arrivalFlag(r.measuredAt, now) })))
    .onConflict((oc) =>
      // issue 10 item 7 (migration 0051): the replay key includes the connector; two connectors with equal
      // readings at the same second are two readings
      oc
        .columns(['charger_id', 'connector_id', 'measured_at', 'measurand', 'phase', 'wh'])
        .doUpdateSet(REPLAY_ADDS)
        // a copy that adds nothing is left as it is: no new row version, and nothing for the caller to recompute
        .where(REPLAY_ADDS_SOMETHING),
    )
    .returning(sql<number>`1`.as('written'))
    .execute();
  return written.length;
}

/** What a replayed reading adds to its stored copy: what the first copy lacked, never overwriting it (here and in
 * the batch statements' KEEP_STORED_READING). */
export const REPLAY_ADDS = {
  session_id: sql<string | null>`coalesce(meter_readings.session_id, excluded.session_id)`,
  signed_data: sql<string | null>`coalesce(meter_readings.signed_data, excluded.signed_data)`,
  signature_status: keepSignatureStatus,
  context: sql<string | null>`coalesce(meter_readings.context, excluded.context)`,
  power_w: sql<number | null>`coalesce(meter_readings.power_w, excluded.power_w)`,
};
/** Whether a replay changes any of those columns of the stored copy. */
export const REPLAY_ADDS_SOMETHING = sql<boolean>`(${sql.join(
  Object.entries(REPLAY_ADDS).map(([column, value]) => sql`meter_readings.${sql.ref(column)} is distinct from ${value}`),
  sql` or `,
)})`;

/** Maximum power of a charger in W: its catalog model's, else OCPP_MAX_POWER_W. */
export async function maxPowerW(trx: Trx, chargerId: string, fallbackW: number): Promise<number> {
  return (await maxPowerWOf(trx, [chargerId], fallbackW)).get(chargerId)!;
}

/** maxPowerW for many chargers in one query, by charger id. */
export async function maxPowerWOf(trx: Trx, chargerIds: string[], fallbackW: number): Promise<Map<string, number>> {
  if (chargerIds.length === 0) return new Map();
  const rows = await trx
    .selectFrom('chargers')
    .leftJoin('catalog_models', 'catalog_models.id', 'chargers.catalog_model_id')
    .select(['chargers.id', 'catalog_models.max_power_w'])
    .where('chargers.id', 'in', chargerIds)
    .execute();
  const known = new Map(rows.map((r) => [r.id, r.max_power_w]));
  return new Map(chargerIds.map((id) => [id, known.get(id) ?? fallbackW]));
}

export type ReviewStatus = 'held' | 'accepted' | 'rejected';
export type ReviewDecision = 'accepted' | 'rejected';

/** A session's energy state as charging_sessions stores it (the incremental update continues from it). */
export interface SessionEnergy {
  energy_wh: string;
  held_wh: string;
  review_status: ReviewStatus | null;
  review_reason: string | null;
  last_meter_wh: string | null;
  last_reading_at: Date | null;
  last_power_w: number | null;
  meter_start_wh: string | null;
}

/** C5.5: counted Wh, held Wh (flagged, not decided) and the review of the flagged steps. */
export interface SessionTotals {
  energy: bigint;
  held: bigint;
  /** held while a flagged step waits for a decision; else rejected when any step was rejected, else accepted */
  status: ReviewStatus | null;
  /** sorted, distinct: of the undecided steps while held, else of all flagged steps */
  reasons: string[];
}

export const noTotals = (): SessionTotals => ({ energy: 0n, held: 0n, status: null, reasons: [] });

export function totalsOf(s: Pick<SessionEnergy, 'energy_wh' | 'held_wh' | 'review_status' | 'review_reason'>): SessionTotals {
  return { energy: BigInt(s.energy_wh), held: BigInt(s.held_wh), status: s.review_status, reasons: s.review_reason ? s.review_reason.split(',') : [] };
}

export function totalsColumns(t: SessionTotals) {
  return { energy_wh: t.energy.toString(), held_wh: t.held.toString(), review_status: t.status, review_reason: t.status === null ? null : t.reasons.join(',') };
}

/** A register reading on the time line: Wh, ms, and the power reported with it (W, null = none). */
export interface RegisterPoint {
  wh: bigint;
  at: number;
  w?: number | null;
}

/**
 * The forward-step rule for one register reading after the previous one: a backward step is flagged, a step above
 * what the charger's power allows is flagged, a step far below what the reported power delivered is flagged; any
 * other step counts. `counted` is what counts before any review.
 */
export function stepOf(prev: RegisterPoint, cur: RegisterPoint, maxW: number): { anomaly: string | null; step: bigint; counted: bigint } {
  const step = cur.wh - prev.wh;
  const ms = BigInt(Math.max(0, cur.at - prev.at));
  // allowed Wh = W × ms / 3.6e6, with tolerance and 1 Wh of rounding slack; over at least one second, the resolution
  // of a charger's timestamps (a 1.6 meterStop stamped in the second of the last MeterValues, D107)
  const allowed = (BigInt(maxW) * (ms < 1000n ? 1000n : ms) * POWER_TOLERANCE_PCT) / (3_600_000n * 100n) + 1n;
  if (step < 0n) return { anomaly: ANOMALY.backwards, step, counted: 0n };
  if (step > allowed) return { anomaly: ANOMALY.implausible, step, counted: 0n };
  // the power at both ends of the step (the charger delivered it throughout) against what the register shows
  if (prev.w != null && cur.w != null) {
    const implied = (BigInt(Math.min(prev.w, cur.w)) * ms) / 3_600_000n;
    if (implied >= TOO_SLOW_MIN_IMPLIED_WH && step * TOO_SLOW_FACTOR < implied) return { anomaly: ANOMALY.tooSlow, step, counted: 0n };
  }
  return { anomaly: null, step, counted: step };
}

/** A register reading to fold: its point, its own flag (readingFlag/arrivalFlag), its stored anomaly and review. */
export interface FoldPoint extends RegisterPoint {
  flag: string | null;
  /** as stored (null for a reading not stored yet) */
  anomaly: string | null;
  review: ReviewDecision | null;
}

/** One flagged step into the review state (order-independent: the result is that of the whole set). */
function noteFlag(t: SessionTotals, reason: string, review: ReviewDecision | null): void {
  const withReason = (list: string[]) => (list.includes(reason) ? list : [...list, reason].sort());
  if (review === null) {
    t.reasons = t.status === 'held' ? withReason(t.reasons) : [reason];
    t.status = 'held';
  } else if (t.status !== 'held') {
    t.status = review === 'rejected' || t.status === 'rejected' ? 'rejected' : 'accepted';
    t.reasons = withReason(t.reasons);
  }
}

/**
 * The one rule of C4.5 and C5.5 over register readings in fold order (fold-order.ts), continuing from `prev` (the last reading
 * already folded, a trusted one: see updateSessionEnergy) and the totals so far (updated in place). A reading's
 * anomaly is its own flag, else its step's (stepOf); a step counts iff stepCounts; a flagged positive step not
 * decided is held; a decision stays only while the reading's anomaly stays what it was. Returns each reading's
 * anomaly and review.
 *
 * D176: a reading whose own value is doubtful (its own flag: an invalid signature, a future timestamp, out of its
 * session's time, D260) and not accepted is no base: the next step starts from the last trusted reading, so a
 * rejected or undecided value never decides how much of the next step counts (a lowered value with a bad signature
 * made the meter's next step count twice). When no trusted reading precedes it (a session's doubtful first reading),
 * it is the base, and no step from it counts: held while it waits for a decision, nothing once rejected (accepted, it
 * is trusted and the steps count).
 *
 * D258: held Wh are what an accept would add. Accepted, each doubtful reading is the next one's base, so an undecided
 * doubtful reading holds its step from the undecided doubtful reading before it since the base (a rejected one stays
 * no base), not its whole step from the base: ten readings of a clock that runs ahead, 100 Wh apart, hold 900 Wh,
 * not 4,500. A trusted reading after them releases what its own step covers of them (all of it when the meter went on
 * up; the part above it when the doubtful values were higher). After a rejected doubtful first reading, nothing from
 * it counts either way: the first undecided doubtful reading after it holds nothing, the next ones their steps from
 * it, and a trusted reading after them its step from the last of them (accepted, that step would count).
 */
export function foldSteps(t: SessionTotals, prev: RegisterPoint | null, points: FoldPoint[], maxW: number): Array<{ anomaly: string | null; review: ReviewDecision | null }> {
  /** the base is a doubtful reading (no trusted one came before it): 'held' while undecided, 'rejected' after */
  let doubtfulBase: 'held' | 'rejected' | null = null;
  /** Wh held for undecided doubtful readings since the base, released as a trusted reading after them covers them */
  let pending = 0n;
  /** the last undecided doubtful reading since the base (an accept would make it the next one's base) */
  let chain: RegisterPoint | null = null;
  const positive = (wh: bigint) => (wh > 0n ? wh : 0n);
  return points.map((p) => {
    let step = 0n;
    let anomaly = p.flag;
    if (prev) {
      const s = stepOf(prev, p, maxW);
      step = s.step;
      anomaly ??= s.anomaly;
    }
    const review = anomaly !== null && anomaly === p.anomaly ? p.review : null;
    if (anomaly !== null) noteFlag(t, anomaly, review);
    const trusted = p.flag === null || review === 'accepted';
    if (!trusted) {
      // a doubtful value: rejected, it holds nothing; undecided, what it adds to the doubtful values before it
      if (prev && review === null) {
        const from = chain ?? (doubtfulBase === 'rejected' ? null : prev);
        const add = from ? positive(p.wh - from.wh) : 0n;
        t.held += add;
        pending += add;
        chain = p;
      }
      if (!prev) {
        prev = p;
        doubtfulBase = review === 'rejected' ? 'rejected' : 'held';
      }
      return { anomaly, review };
    }
    if (doubtfulBase === 'rejected') {
      // nothing from a rejected first value counts; accepted, the doubtful values after it would be bases
      if (chain) t.held += positive(p.wh - chain.wh);
    } else {
      if (step > 0n) {
        if (doubtfulBase === null && stepCounts(anomaly, review)) t.energy += step;
        else if (doubtfulBase === 'held' || review === null) t.held += step;
      }
      const covered = pending < positive(step) ? pending : positive(step);
      t.held -= covered;
    }
    pending = 0n;
    chain = null;
    prev = p;
    doubtfulBase = null;
    return { anomaly, review };
  });
}
