// C4.12 retention: quarantined OCPP messages (whole messages and set-aside parts, replayed or not) are kept
// QUARANTINE_RETENTION_DAYS after they were received, then deleted. Rate-limit counters have their own job
// (rate-limit-cleanup, RATE_LIMIT_CLEANUP_CRON), which deletes a counter once its window has ended. The same run
// deletes the dashboard's sign-in links and sessions a day after they could last be used (used, signed out, expired),
// and the CPO access tokens a day after they expired (D235: one row per POST /oauth/token, never used again).
// Deleted in batches, so a large backlog never holds one long statement (statement_timeout, C4.12) or lock.
import { sql } from 'kysely';
import { deleteInBatches } from '../db/batched-delete.ts';
import { deleteExpiredAccessTokens } from '../domain/credentials/tokens.ts';
import { deleteEndedDashboardRows } from '../domain/dashboard/sign-in.ts';
import type { Job } from './job.ts';

export const retentionJob: Job = {
  name: 'retention',
  cron: (config) => config.RETENTION_CRON,
  async run(deps) {
    const days = deps.config.QUARANTINE_RETENTION_DAYS;
    const cutoff = new Date(deps.clock().getTime() - days * 86_400_000);
    const deleted = await deleteInBatches(deps.db, 'ocpp_quarantine', sql`received_at < ${cutoff}`);
    const dashboard = await deleteEndedDashboardRows(deps);
    const accessTokens = await deleteExpiredAccessTokens(deps);
    return {
      quarantine_deleted: deleted,
      quarantine_cutoff: cutoff.toISOString(),
      dashboard_links_deleted: dashboard.links,
      dashboard_sessions_deleted: dashboard.sessions,
      access_tokens_deleted: accessTokens,
    };
  },
};
