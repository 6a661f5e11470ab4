// Deletes operator command rows (ocpp_commands) older than 7 days: they are only the hand-over between
// processes and a short audit trail. Quarantined messages are kept for review.
import { sql } from 'kysely';
import type { Job } from './job.ts';

export const ocppCommandsCleanupJob: Job = {
  name: 'ocpp-commands-cleanup',
  cron: () => '17 * * * *',
  async run(deps) {
    const cutoff = new Date(deps.clock().getTime() - 7 * 24 * 3_600_000);
    const r = await deps.db.deleteFrom('ocpp_commands').where('created_at', '<', cutoff).executeTakeFirst();
    // a request whose holder vanished stays 'pending'/'sent' only until its requester gave up
    await deps.db
      .updateTable('ocpp_commands')
      .set({ status: 'timeout', answered_at: sql`now()` })
      .where('status', 'in', ['pending', 'sent'])
      .where('created_at', '<', new Date(deps.clock().getTime() - 3_600_000))
      .execute();
    return { deleted: Number(r.numDeletedRows) };
  },
};
