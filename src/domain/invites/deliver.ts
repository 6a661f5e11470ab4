// C3.5: the outbox-deliver job. Due messages go out by SMTP; a temporary failure is retried with
// exponential backoff (1, 2, 4, 8 minutes) and marked failed after MAX_ATTEMPTS; a permanent refusal of
// the recipient (SMTP 5xx on RCPT TO, a hard bounce) fails at once and puts the address on the
// suppression list. Suppressed addresses are never sent to. One process runs the job at a time (scheduler).
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { unsubscribeUrl } from './outbox.ts';
import { cutText } from '../../lib/nul.ts';

export const MAX_ATTEMPTS = 5;
const BACKOFF_BASE_MS = 60_000;

export interface DeliveryRun {
  smtp: boolean;
  due: number;
  sent: number;
  retried: number;
  failed: number;
  suppressed: number;
}

interface SmtpError {
  responseCode?: number;
  command?: string;
  message?: string;
}

const isHardBounce = (e: SmtpError) =>
  typeof e.responseCode === 'number' && e.responseCode >= 500 && e.responseCode < 600 && /RCPT/i.test(e.command ?? '');

export async function deliverOutbox(deps: Deps, opts: { limit?: number } = {}): Promise<DeliveryRun> {
  const mailer = deps.mailer;
  const out: DeliveryRun = { smtp: !!mailer, due: 0, sent: 0, retried: 0, failed: 0, suppressed: 0 };
  if (!mailer) return out;
  const now = deps.clock();
  const due = await deps.db
    .selectFrom('outbox_messages as m')
    .leftJoin('email_suppressions as s', (join) => join.on(sql<boolean>`s.email_lower = lower(m.to_email)`))
    .select(['m.id', 'm.to_email', 'm.subject', 'm.body', 'm.attempts', 'm.unsubscribe_token', 's.email_lower as suppressed'])
    .where('m.status', '=', 'queued')
    .where('m.next_attempt_at', '<=', now)
    .orderBy('m.next_attempt_at')
    .limit(opts.limit ?? 100)
    .execute();
  out.due = due.length;
  for (const m of due) {
    if (m.suppressed) {
      await deps.db.updateTable('outbox_messages').set({ status: 'suppressed' }).where('id', '=', m.id).execute();
      out.suppressed++;
      continue;
    }
    const attempts = m.attempts + 1;
    try {
      const unsub = unsubscribeUrl(deps, m.unsubscribe_token);
      await mailer.send({ to: m.to_email, subject: m.subject, text: m.body, headers: { 'List-Unsubscribe': `<${unsub}>` } });
      await deps.db
        .updateTable('outbox_messages')
        .set({ status: 'sent', attempts, sent_at: deps.clock(), last_error: null })
        .where('id', '=', m.id)
        .execute();
      out.sent++;
    } catch (err) {
      const e = err as SmtpError;
      const error = cutText(`${e.responseCode ?? ''} ${e.message ?? String(err)}`.trim(), 500);
      if (isHardBounce(e)) {
        await deps.db
          .insertInto('email_suppressions')
          .values({ email_lower: m.to_email.toLowerCase(), reason: 'bounce', detail: error, created_at: now })
          .onConflict((oc) => oc.column('email_lower').doNothing())
          .execute();
        await deps.db.updateTable('outbox_messages').set({ status: 'failed', attempts, last_error: error }).where('id', '=', m.id).execute();
        out.failed++;
      } else if (attempts >= MAX_ATTEMPTS) {
        await deps.db.updateTable('outbox_messages').set({ status: 'failed', attempts, last_error: error }).where('id', '=', m.id).execute();
        out.failed++;
      } else {
        const next = new Date(now.getTime() + BACKOFF_BASE_MS * 2 ** (attempts - 1));
        await deps.db
          .updateTable('outbox_messages')
          .set({ attempts, next_attempt_at: next, last_error: error })
          .where('id', '=', m.id)
          .execute();
        out.retried++;
      }
      deps.logger.warn({ messageId: m.id, attempts, error }, 'outbox delivery failed');
    }
  }
  return out;
}
