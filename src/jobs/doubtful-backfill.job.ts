// D215: the one-time recompute of the sessions stored before D176 that hold a doubtful reading (their energy was
// stored under the old rule, their months follow the new one). Runs in the background when the scheduler of a process
// starts (`atStart`), and through POST /admin/jobs/doubtful-backfill/run; the scheduler's advisory lock lets one
// process at a time run it, and the row in `backfills` (migrations/0081), written at the end, makes every later run
// answer that it was done. A run ended by a stopping service writes no row: the next start does it again, which
// is harmless (a recompute of a session already recomputed changes nothing).
import { doubtfulSessionIds, RECOMPUTE_BATCH_SESSIONS, recomputeDoubtfulSessions } from '../domain/charging/doubtful-backfill.ts';
import { publishChargerChanges } from '../domain/charging/charger-changes.ts';
import type { Deps } from '../deps.ts';
import { isoUtc } from '../lib/time.ts';
import type { Job } from './job.ts';

export const DOUBTFUL_BACKFILL = 'doubtful-backfill';

export type DoubtfulBackfillResult =
  | { status: 'done'; sessions_checked: number; sessions_changed: number; blocks_read: number }
  | { status: 'done_earlier'; done_at: string }
  | { status: 'interrupted'; sessions_checked: number; sessions_changed: number; blocks_read: number };

export async function runDoubtfulBackfill(deps: Deps): Promise<DoubtfulBackfillResult> {
  const done = await deps.db.selectFrom('backfills').select('done_at').where('name', '=', DOUBTFUL_BACKFILL).executeTakeFirst();
  if (done) return { status: 'done_earlier', done_at: isoUtc(done.done_at) };
  // D169: a stopping service ends the run between two statements; nothing is marked done
  const stopping = () => deps.startup?.stopping === true;
  const tally = { sessions_checked: 0, sessions_changed: 0, blocks_read: 0 };
  const ids = await doubtfulSessionIds(deps.db, stopping, tally);
  if (ids === null) return { status: 'interrupted', ...tally };
  for (let i = 0; i < ids.length; i += RECOMPUTE_BATCH_SESSIONS) {
    if (stopping()) return { status: 'interrupted', ...tally };
    const batch = ids.slice(i, i + RECOMPUTE_BATCH_SESSIONS);
    const changed = await recomputeDoubtfulSessions(deps, batch);
    tally.sessions_checked += batch.length;
    tally.sessions_changed += changed.length;
    for (const c of changed) deps.logger.info({ event: 'backfill.session_changed', backfill: DOUBTFUL_BACKFILL, ...c }, 'session recomputed under D176');
    // C7.1: a changed session's kWh and review show on its charger's streams, as after a decision
    publishChargerChanges(deps, new Set(changed.map((c) => c.charger_id)));
  }
  const result = { status: 'done' as const, ...tally };
  await deps.db
    .insertInto('backfills')
    .values({ name: DOUBTFUL_BACKFILL, result: JSON.stringify(result) })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  return result;
}

export const doubtfulBackfillJob: Job = {
  name: DOUBTFUL_BACKFILL,
  cron: () => null,
  atStart: true,
  run: (deps) => runDoubtfulBackfill(deps),
};
