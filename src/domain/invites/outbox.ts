// C3.5: the e-mail outbox and the suppression list. Messages are queued in the same transaction as the
// drafts they announce; the outbox-deliver job sends them by SMTP when SMTP_URL is set. Without SMTP they
// stay queued and visible through GET /admin/outbox (C1.6).
import crypto from 'node:crypto';
import type { Deps } from '../../deps.ts';
import type { Db } from '../../db/database.ts';
import type { SuppressionReason } from '../../db/tables/partner.ts';
import { DomainError } from '../errors.ts';
import { validEmail } from '../../lib/email.ts';
import { isoUtc as iso } from '../../lib/time.ts';
import { operatorFooterText, type OperatorIdentity } from '../../lib/operator.ts';

export interface QueuedMessage {
  to: string;
  subject: string;
  body: string;
  kind?: string;
  draftId?: string | null;
  unsubscribeToken: string;
}

/** An unguessable token for the unsubscribe link of one message. */
export const newUnsubscribeToken = (): string => crypto.randomBytes(18).toString('base64url');

export const unsubscribeUrl = (deps: Deps, token: string): string => `${deps.config.PUBLIC_BASE_URL}/unsubscribe/${token}`;

/**
 * Queue messages in one multi-row insert (db may be a transaction). Every e-mail leaves through here, so here each
 * body gets the operator's footer (C7.3: name, address, KvK, support address, privacy page).
 */
export async function queueMessages(db: Db, now: Date, messages: QueuedMessage[], operator: OperatorIdentity): Promise<void> {
  const footer = operatorFooterText(operator);
  for (let i = 0; i < messages.length; i += 500) {
    const chunk = messages.slice(i, i + 500);
    await db
      .insertInto('outbox_messages')
      .values(
        chunk.map((m) => ({
          to_email: m.to,
          subject: m.subject,
          body: `${m.body}\n\n${footer}`,
          kind: m.kind ?? 'claim_invite',
          draft_id: m.draftId ?? null,
          unsubscribe_token: m.unsubscribeToken,
          created_at: now,
          next_attempt_at: now,
        })),
      )
      .execute();
  }
}


/**
 * GET /admin/outbox (C1.6): the messages, newest first, a page at a time (D131): `count` is every message matching
 * the filter, the id breaks ties of created_at so pages never repeat or skip a message.
 */
export async function listOutbox(deps: Deps, opts: { to?: string | undefined; limit?: number; offset?: number } = {}) {
  const limit = opts.limit ?? 100;
  const offset = opts.offset ?? 0;
  let base = deps.db.selectFrom('outbox_messages');
  const to = opts.to?.trim().toLowerCase();
  if (to) base = base.where((eb) => eb(eb.fn('lower', ['to_email']), '=', to));
  const { n } = await base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await base
    .select(['to_email', 'subject', 'body', 'created_at', 'status', 'attempts', 'sent_at'])
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute();
  return {
    messages: rows.map((r) => ({
      to: r.to_email,
      subject: r.subject,
      body: r.body,
      created_at: iso(r.created_at),
      status: r.status,
      attempts: r.attempts,
      sent_at: r.sent_at ? iso(r.sent_at) : null,
    })),
    limit,
    offset,
    count: Number(n),
  };
}

/** Put an address on the suppression list (an earlier entry keeps its first reason). */
export async function suppressEmail(
  deps: Deps,
  input: { email: unknown; reason?: unknown; detail?: string | null },
): Promise<{ email: string; reason: SuppressionReason; created: boolean }> {
  const email = typeof input.email === 'string' ? validEmail(input.email) : null;
  if (!email) throw new DomainError('invalid_request', 'email must be an e-mail address');
  const reason = (input.reason ?? 'manual') as SuppressionReason;
  if (!['bounce', 'unsubscribe', 'manual'].includes(reason)) {
    throw new DomainError('invalid_request', 'reason must be one of bounce, unsubscribe, manual');
  }
  const row = await deps.db
    .insertInto('email_suppressions')
    .values({ email_lower: email.toLowerCase(), reason, detail: input.detail ?? null, created_at: deps.clock() })
    .onConflict((oc) => oc.column('email_lower').doNothing())
    .returning('email_lower')
    .executeTakeFirst();
  // queued mail to a suppressed address is never sent
  await deps.db
    .updateTable('outbox_messages')
    .set({ status: 'suppressed' })
    .where('status', '=', 'queued')
    .where((eb) => eb(eb.fn('lower', ['to_email']), '=', email.toLowerCase()))
    .execute();
  return { email: email.toLowerCase(), reason, created: !!row };
}

/** The unsubscribe link of a message: the address it went to, or null for an unknown token. */
export async function messageByUnsubscribeToken(deps: Deps, token: string): Promise<{ to: string } | null> {
  if (!/^[A-Za-z0-9_-]{10,64}$/.test(token)) return null;
  const row = await deps.db
    .selectFrom('outbox_messages')
    .select('to_email')
    .where('unsubscribe_token', '=', token)
    .executeTakeFirst();
  return row ? { to: row.to_email } : null;
}

export async function isSuppressed(deps: Deps, email: string): Promise<boolean> {
  const row = await deps.db
    .selectFrom('email_suppressions')
    .select('email_lower')
    .where('email_lower', '=', email.toLowerCase())
    .executeTakeFirst();
  return !!row;
}
