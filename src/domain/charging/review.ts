// C5.5 held energy: what a session shows of its flagged steps, and the operator's decision on them. A flagged step
// (meter_readings.anomaly) counts only once accepted (meter_readings.review, readings.ts stepCounts); a decision
// recomputes the session (energy_wh, held_wh, review columns) and bumps its updated_at, so the next incremental
// energy aggregation recomputes every month the session's readings touch (docs/energy.md).
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Deps } from '../../deps.ts';
import { isoUtc as utc } from '../../lib/time.ts';
import { DomainError } from '../errors.ts';
import { kwhOf } from './estimate.ts';
import type { SignedValue } from './events.ts';
import { ANOMALY, ENERGY_REGISTER, maxPowerW, type ReviewStatus } from './readings.ts';
import { recomputeSession } from './session-energy.ts';

export interface SessionReview {
  status: ReviewStatus;
  /** the hold reasons, sorted and comma-separated (of the undecided steps while held) */
  reason: string;
  held_kwh: number;
}

/** The `review` of a Personal session view: null when nothing was flagged. */
export function reviewOf(s: { review_status: ReviewStatus | null; review_reason: string | null; held_wh: string }): SessionReview | null {
  return s.review_status === null ? null : { status: s.review_status, reason: s.review_reason ?? '', held_kwh: kwhOf(s.held_wh) };
}

export type ReviewAction = 'accept' | 'reject';

export interface ReviewedSession {
  session_id: string;
  charger_id: string;
  /** the counted energy after the decision */
  kwh: number;
  review: SessionReview | null;
  /** how many flagged steps the decision covered */
  decided_steps: number;
}

/**
 * An operator accepts or rejects every flagged step of a held session that waits for a decision. Accepted steps
 * count from now on, rejected ones never; steps flagged later hold the session again. 404 session_not_found,
 * 409 session_not_held (nothing waits for a decision).
 */
export async function decideSessionReview(deps: Deps, sessionId: string, action: ReviewAction): Promise<ReviewedSession> {
  const review = action === 'accept' ? 'accepted' : 'rejected';
  return deps.db.transaction().execute(async (trx) => {
    // the row lock first, as the ingest takes it, so a decision and new readings never write over each other
    const s = await trx.selectFrom('charging_sessions').select(['id', 'charger_id', 'review_status']).where('id', '=', sessionId).forUpdate().executeTakeFirst();
    if (!s) throw new DomainError('session_not_found', `no session ${sessionId}`);
    if (s.review_status !== 'held') {
      throw new DomainError('session_not_held', `session ${sessionId} has no step waiting for review (review: ${s.review_status ?? 'none'})`);
    }
    const marked = await trx
      .updateTable('meter_readings')
      .set({ review, reviewed_at: sql<Date>`clock_timestamp()` })
      .where('session_id', '=', sessionId)
      .where('measurand', '=', ENERGY_REGISTER)
      .where('phase', '=', '')
      .where('anomaly', 'is not', null)
      .where('review', 'is', null)
      .executeTakeFirst();
    await recomputeSession(trx, sessionId, await maxPowerW(trx, s.charger_id, deps.config.OCPP_MAX_POWER_W));
    const after = await trx
      .selectFrom('charging_sessions')
      .select(['energy_wh', 'held_wh', 'review_status', 'review_reason'])
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    deps.logger.info({ sessionId, review, steps: Number(marked.numUpdatedRows) }, 'session review decided');
    return { session_id: s.id, charger_id: s.charger_id, kwh: kwhOf(after.energy_wh), review: reviewOf(after), decided_steps: Number(marked.numUpdatedRows) };
  });
}

export interface HeldSession {
  session_id: string;
  charger_id: string;
  started_at: string;
  ended_at: string | null;
  kwh: number;
  review: SessionReview;
}

/** The sessions waiting for an operator's decision, oldest first (then by id), a page at a time; of one charger if asked. */
export async function listHeldSessions(
  deps: Deps,
  q: { limit: number; offset: number; charger_id?: string | undefined },
): Promise<{ sessions: HeldSession[]; limit: number; offset: number; count: number }> {
  let base = deps.db.selectFrom('charging_sessions').where('review_status', '=', 'held');
  if (q.charger_id) base = base.where('charger_id', '=', q.charger_id);
  const c = await base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await base
    .select(['id', 'charger_id', 'started_at', 'ended_at', 'energy_wh', 'held_wh', 'review_status', 'review_reason'])
    .orderBy('started_at')
    .orderBy('id')
    .limit(q.limit)
    .offset(q.offset)
    .execute();
  return {
    sessions: rows.map((r) => ({
      session_id: r.id,
      charger_id: r.charger_id,
      started_at: utc(r.started_at),
      ended_at: r.ended_at ? utc(r.ended_at) : null,
      kwh: kwhOf(r.energy_wh),
      review: reviewOf(r)!,
    })),
    limit: q.limit,
    offset: q.offset,
    count: Number(c.n),
  };
}

/**
 * A signed value that arrived alone is judged when it is placed on its reading (signed-values.ts), after the session's
 * energy was brought up to date: a session whose reading is now `invalid` without its anomaly saying so (an earlier
 * reason, future_timestamp, ranks first) is recomputed, so the invalid signature holds it (readings.ts readingFlag).
 */
export async function holdInvalidSignatures(trx: Db, chargerId: string, values: SignedValue[] | undefined, maxW: number): Promise<void> {
  if (!values?.length) return;
  const rows = await trx
    .selectFrom('meter_readings')
    .select('session_id')
    .distinct()
    .where('charger_id', '=', chargerId)
    .where('measured_at', 'in', values.map((v) => v.measuredAt))
    .where('measurand', '=', ENERGY_REGISTER)
    .where('phase', '=', '')
    .where('signature_status', '=', 'invalid')
    .where('session_id', 'is not', null)
    .where((eb) => eb.or([eb('anomaly', 'is', null), eb('anomaly', 'not in', [ANOMALY.future, ANOMALY.invalidSignature])]))
    .execute();
  for (const r of rows) {
    await trx.selectFrom('charging_sessions').select('id').where('id', '=', r.session_id!).forUpdate().execute();
    await recomputeSession(trx, r.session_id!, maxW);
  }
}
