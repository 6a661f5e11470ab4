// C3.5: the outbox-deliver job. Due messages go out by SMTP, one at a time:
//  - D169: each is claimed (`sending`) before it is handed to the SMTP server and marked `sent` in the step after the
//    server accepted it, so no restart sends again a message the server may have accepted: one left `sending` by a
//    process that died mid-send is failed as interrupted (the operator can requeue it) and never resent on its own.
//    A stopping service (deps.startup.stopping) ends the run between messages: the one in flight finishes, no next is taken.
//  - D170: a temporary failure is retried with backoff (1, 2, 4, … minutes, capped at an hour) for two days
//    (RETRY_FOR_MS), then the message fails (POST /admin/outbox/:id/requeue queues it again). Only a recipient-specific
//    permanent refusal at RCPT (enhanced status 5.1.x, or 550/551/553 without a 5.7.x policy code) is a bounce that puts
//    the address on the suppression list; any other 5xx fails the message without suppressing the address.
//  - D171: suppressed addresses get no mail; an unsubscribe stops invites only, not the transactional kinds.
//  - D172: a sent or suppressed message keeps no live link in its stored body; a failed one loses it after a week.
//  - D217: every decision is counted in outbox_deliveries_total{result} (./metrics.ts), and a failed send logs
//    `outbox.delivery_failed`: the job ends `ok` whatever happened to the mail.
// One process runs the job at a time (scheduler).
import type { Deps } from '../../deps.ts';
import { eraseLinks, isTransactional, redactLinks, suppressionStops, TRANSACTIONAL_KINDS, unsubscribeUrl } from './outbox.ts';
import { cutText } from '../../lib/nul.ts';
import { outboxDeliveries } from './metrics.ts';
import type { Selectable } from 'kysely';
import type { Mailer } from './mailer.ts';
import type { OutboxMessagesTable } from '../../db/tables/partner.ts';

const MINUTE = 60_000;
/** C7.2: how long a sign-in link works (SIGN_IN_LINK_MINUTES of dashboard/sign-in.ts, which imports this folder) */
export const SIGN_IN_MAIL_MINUTES = 15;
/** D170: the wait after the n-th failed attempt: 2^(n-1) minutes, at most an hour */
export const retryDelayMs = (attempt: number): number => Math.min(2 ** Math.min(attempt - 1, 10), 60) * MINUTE;
/** D170: a message is retried for two days from its first attempt (a long week-end outage of a relay is not covered) */
export const RETRY_FOR_MS = 48 * 60 * MINUTE;
/** the attempt after which a message fails: the first whose wait would end more than RETRY_FOR_MS after the first attempt */
export const MAX_ATTEMPTS = (() => {
  let n = 1;
  for (let span = 0; span < RETRY_FOR_MS; n++) span += retryDelayMs(n);
  return n;
})();
/** D169: a message `sending` this long was left by a run that ended mid-send (a send is bounded far below this) */
export const SENDING_STALE_MS = 10 * MINUTE;
/** D172: a failed message keeps its links this long, so that it can be requeued */
export const FAILED_LINKS_KEPT_MS = 7 * 24 * 60 * MINUTE;
/** D226: a run takes due messages this many at a time, so mail queued meanwhile waits for at most this many sends */
const BATCH = 25;
/** D226: a run takes no new batch after this long (the next run goes on): a stopping service or a job listing sees it end */
const RUN_BUDGET_MS = 5 * MINUTE;

export const INTERRUPTED_ERROR =
  'interrupted while being handed to the SMTP server (the process ended); it may have been delivered, so it is not sent again on its own: requeue it to send it again';

export interface DeliveryRun {
  smtp: boolean;
  due: number;
  sent: number;
  retried: number;
  failed: number;
  suppressed: number;
  /** D169: messages found `sending` from an earlier run that ended mid-send, now failed */
  interrupted: number;
  /** D169: the service began to stop and the run ended before its last due message */
  stopped: boolean;
}

interface SmtpError {
  responseCode?: number;
  response?: string;
  command?: string;
  message?: string;
}

/**
 * D170: what an SMTP failure means for the message. `bounce`: the recipient does not exist (at RCPT, an enhanced status
 * 5.1.x, or 550/551/553 without a 5.7.x policy code): fail it and suppress the address. `permanent`: another 5xx (a
 * relay or policy refusal, a refused sender or content): fail it, the address stays usable. `temporary`: anything
 * else (4xx, a timeout, a refused connection, and a 5xx to the greeting or the login, which refuse the service and
 * not this message): retry.
 */
export function classifySmtpError(e: SmtpError): 'bounce' | 'permanent' | 'temporary' {
  const code = e.responseCode;
  if (typeof code !== 'number' || code < 500 || code >= 600) return 'temporary';
  const command = (e.command ?? '').toUpperCase();
  if (command === 'CONN' || command === 'GREETING' || command.startsWith('AUTH') || command === 'EHLO' || command === 'HELO') return 'temporary';
  if (!command.includes('RCPT')) return 'permanent';
  const enhanced = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/.exec(e.response ?? e.message ?? '');
  if (enhanced?.[1] === '5' && enhanced[2] === '1') return 'bounce';
  if ([550, 551, 553].includes(code) && enhanced?.[2] !== '7') return 'bounce';
  return 'permanent';
}

export async function deliverOutbox(deps: Deps, opts: { limit?: number } = {}): Promise<DeliveryRun> {
  const mailer = deps.mailer;
  const out: DeliveryRun = { smtp: !!mailer, due: 0, sent: 0, retried: 0, failed: 0, suppressed: 0, interrupted: 0, stopped: false };
  if (!mailer) return out;
  // D217: each decision below is counted by result, so an operator sees mail not going out (the job itself ends `ok`)
  const deliveries = outboxDeliveries(deps);
  const now = deps.clock();
  // D169: a message an earlier run left `sending` may have reached the server: it fails, and is not resent on its own
  const interrupted = await deps.db
    .updateTable('outbox_messages')
    .set({ status: 'failed', failed_at: now, last_error: INTERRUPTED_ERROR })
    .where('status', '=', 'sending')
    .where('next_attempt_at', '<', new Date(now.getTime() - SENDING_STALE_MS))
    .returning('id')
    .execute();
  out.interrupted = interrupted.length;
  deliveries.inc({ result: 'failed' }, interrupted.length);
  for (const m of interrupted) deps.logger.warn({ event: 'outbox.interrupted', messageId: m.id }, 'outbox message interrupted mid-send: failed, not resent');
  // D172: failed a week ago and not requeued: the links go
  const stale = await deps.db
    .selectFrom('outbox_messages')
    .select(['id', 'body'])
    .where('status', '=', 'failed')
    .where('links_erased_at', 'is', null)
    .where('failed_at', '<', new Date(now.getTime() - FAILED_LINKS_KEPT_MS))
    .limit(500)
    .execute();
  for (const m of stale) await eraseLinks(deps.db, m.id, m.body, now);

  // D226: the run sends until nothing is due (a backlog drains at the SMTP server's pace, not 100 a minute), in small
  // batches with the mail the recipient is waiting for first, so a sign-in link never queues behind a partner's invites
  const started = Date.now();
  while (Date.now() - started < RUN_BUDGET_MS) {
    // the clock read again each batch: what was queued since (a sign-in link) is due in this run
    const due = await dueMessages(deps, deps.clock(), opts.limit ?? BATCH);
    if (due.length === 0) break;
    out.due += due.length;
    for (const m of due) {
      // D169: a stopping service takes no next message (the one in flight has finished)
      if (deps.startup?.stopping) {
        out.stopped = true;
        return out;
      }
      await deliverOne(deps, mailer, m, out, deliveries);
    }
    if (opts.limit !== undefined) break;
  }
  return out;
}

type DueMessage = Pick<Selectable<OutboxMessagesTable>, 'id' | 'to_email' | 'subject' | 'body' | 'kind' | 'attempts' | 'unsubscribe_token' | 'created_at'>;
const DUE_COLUMNS = ['id', 'to_email', 'subject', 'body', 'kind', 'attempts', 'unsubscribe_token', 'created_at'] as const;

/**
 * D226: the next due messages, the kinds a recipient asked for (a sign-in link, a claim confirmation) before the rest,
 * each group oldest first. A message handed to the server leaves the queue or is due again only after its retry wait
 * (at least a minute), so a run does not take it twice in a row.
 */
async function dueMessages(deps: Deps, now: Date, limit: number): Promise<DueMessage[]> {
  const query = (transactional: boolean, n: number) =>
    deps.db
      .selectFrom('outbox_messages')
      .select([...DUE_COLUMNS])
      .where('status', '=', 'queued')
      .where('next_attempt_at', '<=', now)
      .where('kind', transactional ? 'in' : 'not in', [...TRANSACTIONAL_KINDS])
      .orderBy('next_attempt_at')
      .orderBy('id')
      .limit(n)
      .execute();
  const first = await query(true, limit);
  return first.length >= limit ? first : [...first, ...(await query(false, limit - first.length))];
}

async function deliverOne(deps: Deps, mailer: Mailer, m: DueMessage, out: DeliveryRun, deliveries: ReturnType<typeof outboxDeliveries>): Promise<void> {
  const at = deps.clock();
  const suppression = await deps.db
    .selectFrom('email_suppressions')
    .select('reason')
    .where('email_lower', '=', m.to_email.toLowerCase())
    .executeTakeFirst();
  if (suppression && suppressionStops(suppression.reason, m.kind)) {
    await deps.db
      .updateTable('outbox_messages')
      .set({ status: 'suppressed', body: redactLinks(m.body), links_erased_at: at })
      .where('id', '=', m.id)
      .where('status', '=', 'queued')
      .execute();
    out.suppressed++;
    deliveries.inc({ result: 'suppressed' });
    return;
  }
  // a sign-in link is of no use once it has expired
  if (m.kind === 'dashboard_sign_in' && at.getTime() > m.created_at.getTime() + SIGN_IN_MAIL_MINUTES * MINUTE) {
    await deps.db
      .updateTable('outbox_messages')
      .set({ status: 'failed', failed_at: at, last_error: 'the sign-in link expired before it could be delivered', body: redactLinks(m.body), links_erased_at: at })
      .where('id', '=', m.id)
      .where('status', '=', 'queued')
      .execute();
    out.failed++;
    deliveries.inc({ result: 'failed' });
    return;
  }
  // D169: claimed before the send; next_attempt_at holds when the send began while the message is `sending`
  const attempts = m.attempts + 1;
  const claimed = await deps.db
    .updateTable('outbox_messages')
    .set({ status: 'sending', attempts, next_attempt_at: at })
    .where('id', '=', m.id)
    .where('status', '=', 'queued')
    .returning('id')
    .executeTakeFirst();
  if (!claimed) return; // requeued, suppressed or taken meanwhile
  let failure: unknown = null;
  try {
    const headers: Record<string, string> = {};
    if (!isTransactional(m.kind)) {
      // RFC 2369 and RFC 8058: the unsubscribe link, and that a POST to it unsubscribes at once (one click)
      headers['List-Unsubscribe'] = `<${unsubscribeUrl(deps, m.unsubscribe_token)}>`;
      headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
    }
    await mailer.send({ to: m.to_email, subject: m.subject, text: m.body, headers });
  } catch (err) {
    failure = err ?? new Error('send failed');
  }
  if (failure === null) {
    // the server accepted it: sent, in the step right after; should this write fail the row stays `sending` and the
    // message is never sent again (D169)
    await deps.db
      .updateTable('outbox_messages')
      .set({ status: 'sent', sent_at: deps.clock(), last_error: null, body: redactLinks(m.body), links_erased_at: deps.clock() })
      .where('id', '=', m.id)
      .execute();
    out.sent++;
    deliveries.inc({ result: 'sent' });
    return;
  }
  const e = failure as SmtpError;
  const error = cutText(`${e.responseCode ?? ''} ${e.response ?? e.message ?? String(failure)}`.trim(), 500);
  const verdict = classifySmtpError(e);
  const failedAt = deps.clock();
  if (verdict === 'bounce') {
    await deps.db
      .insertInto('email_suppressions')
      .values({ email_lower: m.to_email.toLowerCase(), reason: 'bounce', detail: error, created_at: failedAt, source: 'delivery' })
      .onConflict((oc) => oc.column('email_lower').doNothing())
      .execute();
  }
  if (verdict !== 'temporary' || attempts >= MAX_ATTEMPTS) {
    await deps.db
      .updateTable('outbox_messages')
      .set({ status: 'failed', failed_at: failedAt, last_error: error, next_attempt_at: failedAt })
      .where('id', '=', m.id)
      .execute();
    out.failed++;
    deliveries.inc({ result: 'failed' });
  } else {
    await deps.db
      .updateTable('outbox_messages')
      .set({ status: 'queued', next_attempt_at: new Date(at.getTime() + retryDelayMs(attempts)), last_error: error })
      .where('id', '=', m.id)
      .execute();
    out.retried++;
    deliveries.inc({ result: 'retry' });
  }
  deps.logger.warn({ event: 'outbox.delivery_failed', messageId: m.id, attempts, error, verdict }, 'outbox delivery failed');
}
