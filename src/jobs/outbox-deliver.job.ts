// C3.5: sends queued invite e-mails by SMTP when SMTP_URL is set (retries with backoff, bounces suppressed).
import { deliverOutbox, OUTBOX_DUE } from '../domain/invites/index.ts';
import type { Job } from './job.ts';

export const outboxDeliverJob: Job = {
  name: 'outbox-deliver',
  cron: (config) => (config.SMTP_URL ? config.OUTBOX_DELIVER_CRON : null),
  // D226: a message queued in any process is sent now, not at the next minute
  wakeTopic: OUTBOX_DUE,
  run: (deps) => deliverOutbox(deps),
};
