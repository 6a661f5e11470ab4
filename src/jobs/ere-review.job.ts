// C5.3: every ERE_REVIEW_CRON, delivered months whose review is due (ERE_REVIEW_DAYS after the month ended,
// Amsterdam) move to in_review. Registering (or rejecting) stays an operator step in the admin API.
import { sql } from 'kysely';
import { startDueReviews } from '../domain/ere/review.ts';
import type { Job } from './job.ts';

const LOCK = { namespace: 0x454e5247, key: 2 } as const;

export const ereReviewJob: Job = {
  name: 'ere-review',
  cron: (config) => config.ERE_REVIEW_CRON,
  run: (deps) =>
    deps.db.transaction().execute(async (trx) => {
      const got = await sql<{ ok: boolean }>`select pg_try_advisory_xact_lock(${LOCK.namespace}, ${LOCK.key}) as ok`.execute(trx);
      if (!got.rows[0]?.ok) return { skipped: 'locked', moved: 0, months: [] };
      return startDueReviews({ ...deps, db: trx });
    }),
};
