// C3.5: sends queued invite e-mails by SMTP when SMTP_URL is set (retries with backoff, bounces suppressed).
import { deliverOutbox } from '../domain/invites/index.ts';
import type { Job } from './job.ts';

export const outboxDeliverJob: Job = {
  name: 'outbox-deliver',
  cron: (config) => (config.SMTP_URL ? config.OUTBOX_DELIVER_CRON : null),
  run: (deps) => deliverOutbox(deps),
};
