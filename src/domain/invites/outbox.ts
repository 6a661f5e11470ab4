// C3.5: the e-mail outbox and the suppression list. Messages are queued in the same transaction as the
// drafts they announce; the outbox-deliver job sends them by SMTP when SMTP_URL is set. Without SMTP they
// stay queued and visible through GET /admin/outbox (C1.6).
import crypto from 'node:crypto';
import type { Deps } from '../../deps.ts';
import type { Db } from '../../db/database.ts';
import type { SuppressionReason, SuppressionSource } from '../../db/tables/partner.ts';
import { DomainError } from '../errors.ts';
import { validEmail } from '../../lib/email.ts';
import { isoUtc as iso } from '../../lib/time.ts';
import { operatorFooterText, type OperatorIdentity } from '../../lib/operator.ts';
import { publish } from '../../db/bus.ts';

/** D226: the bus topic on which queued mail asks for a delivery run now (src/jobs/outbox-deliver.job.ts) */
export const OUTBOX_DUE = 'outbox_due';

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
  if (messages.length === 0) return;
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
  // D226: the processes that deliver mail are told at once (on commit, when db is a transaction)
  await publish(db, OUTBOX_DUE, {});
}


/**
 * D171: mail the recipient asked for (a dashboard sign-in link, the confirmation of a claim, D129). An unsubscribe stops
 * every other kind (the partner's invite); these still go to an unsubscribed address (never to a bounced or an
 * operator-suppressed one) and carry no List-Unsubscribe header. A kind not named here counts as one an unsubscribe stops.
 */
export const TRANSACTIONAL_KINDS: readonly string[] = ['dashboard_sign_in', 'claim_link_confirm'];
export const isTransactional = (kind: string): boolean => TRANSACTIONAL_KINDS.includes(kind);
/** Whether an entry of the suppression list with this reason stops mail of this kind (D171). */
export const suppressionStops = (reason: string, kind: string): boolean => reason !== 'unsubscribe' || !isTransactional(kind);

/**
 * D172: the secret part of every link a message carries (a claim link, a sign-in link, the D129 confirmation code, an
 * unsubscribe link) replaced with `…`. GET /admin/outbox shows bodies only so; the stored body loses them once the
 * message is sent or suppressed, or a week after it failed for good.
 */
export function redactLinks(body: string): string {
  return body
    .replace(/(\/(?:claim|unsubscribe|dashboard\/sign-in)\/)[^\s?#/<>"]+/g, '$1…')
    .replace(/([?&]confirm=)[^\s&#<>"]+/g, '$1…');
}

export type OutboxStatusFilter = 'queued' | 'sending' | 'sent' | 'failed' | 'suppressed';

/**
 * GET /admin/outbox (C1.6): the messages, newest first, a page at a time (D131): `count` is every message matching
 * the filter, the id breaks ties of created_at so pages never repeat or skip a message. D173: each with its id, kind,
 * last error and next attempt; `status` filters. D172: no live link: the tokens in the bodies are shown as `…`.
 */
export async function listOutbox(
  deps: Deps,
  opts: { to?: string | undefined; status?: OutboxStatusFilter | undefined; limit?: number; offset?: number } = {},
) {
  const limit = opts.limit ?? 100;
  const offset = opts.offset ?? 0;
  // D207: without SMTP the outbox is how a queued message is handed on (C3.5): it is shown whole until it is of no use
  const handedOn = !deps.config.SMTP_URL;
  let base = deps.db.selectFrom('outbox_messages');
  const to = opts.to?.trim().toLowerCase();
  if (to) base = base.where((eb) => eb(eb.fn('lower', ['to_email']), '=', to));
  if (opts.status) base = base.where('status', '=', opts.status);
  const { n } = await base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await base
    .select(['id', 'to_email', 'subject', 'body', 'kind', 'created_at', 'status', 'attempts', 'sent_at', 'last_error', 'next_attempt_at', 'failed_at'])
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute();
  return {
    messages: rows.map((r) => ({
      id: r.id,
      to: r.to_email,
      subject: r.subject,
      body: handedOn && r.status === 'queued' ? r.body : redactLinks(r.body),
      kind: r.kind,
      created_at: iso(r.created_at),
      status: r.status,
      attempts: r.attempts,
      last_error: r.last_error,
      next_attempt_at: r.status === 'queued' ? iso(r.next_attempt_at) : null,
      sent_at: r.sent_at ? iso(r.sent_at) : null,
      failed_at: r.failed_at ? iso(r.failed_at) : null,
    })),
    limit,
    offset,
    count: Number(n),
  };
}

/**
 * POST /admin/outbox/:id/requeue (D170): a message that failed for good is queued again, due now, its attempts counted
 * from 0 (the retry schedule starts over). Only a failed message whose links are still whole (D172: erased a week after
 * it failed) can be; 404 for an unknown id.
 */
export async function requeueMessage(deps: Deps, id: string): Promise<{ id: string; status: 'queued'; next_attempt_at: string }> {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id) ? id.toLowerCase() : null;
  const row = uuid ? await deps.db.selectFrom('outbox_messages').select(['status', 'links_erased_at']).where('id', '=', uuid).executeTakeFirst() : undefined;
  if (!uuid || !row) throw new DomainError('outbox_message_not_found', `No message ${id} in the outbox`);
  if (row.status !== 'failed') {
    throw new DomainError('outbox_message_not_failed', `Message ${uuid} is ${row.status}; only a failed message can be queued again`);
  }
  if (row.links_erased_at) {
    throw new DomainError('outbox_message_not_failed', `Message ${uuid} failed more than a week ago and its links were erased; it cannot be sent again`);
  }
  const now = deps.clock();
  const done = await deps.db
    .updateTable('outbox_messages')
    .set({ status: 'queued', attempts: 0, next_attempt_at: now, failed_at: null })
    .where('id', '=', uuid)
    .where('status', '=', 'failed')
    .where('links_erased_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (!done) throw new DomainError('outbox_message_not_failed', `Message ${uuid} changed meanwhile; only a failed message can be queued again`);
  await publish(deps.db, OUTBOX_DUE, {});
  return { id: uuid, status: 'queued', next_attempt_at: iso(now) };
}

/**
 * Put an address on the suppression list. An earlier entry stays as it is (its first reason): `created` says whether
 * this call added one, and `reason` is the stored entry's (D173). Queued mail the entry stops becomes suppressed (an
 * unsubscribe stops no transactional mail, D171).
 */
export async function suppressEmail(
  deps: Deps,
  input: { email: unknown; reason?: unknown; detail?: string | null; source?: SuppressionSource },
): Promise<{ email: string; reason: SuppressionReason; created: boolean }> {
  const email = typeof input.email === 'string' ? validEmail(input.email) : null;
  if (!email) throw new DomainError('invalid_request', 'email must be an e-mail address');
  const reason = (input.reason ?? 'manual') as SuppressionReason;
  if (!['bounce', 'unsubscribe', 'manual'].includes(reason)) {
    throw new DomainError('invalid_request', 'reason must be one of bounce, unsubscribe, manual');
  }
  const address = email.toLowerCase();
  const row = await deps.db
    .insertInto('email_suppressions')
    .values({ email_lower: address, reason, detail: input.detail ?? null, created_at: deps.clock(), source: input.source ?? 'operator' })
    .onConflict((oc) => oc.column('email_lower').doNothing())
    .returning('reason')
    .executeTakeFirst();
  const stored = row ?? (await deps.db.selectFrom('email_suppressions').select('reason').where('email_lower', '=', address).executeTakeFirstOrThrow());
  await suppressQueued(deps.db, address, stored.reason, deps.clock());
  return { email: address, reason: stored.reason, created: !!row };
}

/** Queued mail to an address that an entry with this reason stops is never sent (D171: an unsubscribe spares transactional mail). */
export async function suppressQueued(db: Db, address: string, reason: string, now: Date): Promise<void> {
  let q = db
    .updateTable('outbox_messages')
    .set({ status: 'suppressed' })
    .where('status', '=', 'queued')
    .where((eb) => eb(eb.fn('lower', ['to_email']), '=', address));
  if (reason === 'unsubscribe') q = q.where('kind', 'not in', [...TRANSACTIONAL_KINDS]);
  const stopped = await q.returning(['id', 'body']).execute();
  // D172: a message that will never be sent keeps no live link
  for (const m of stopped) await eraseLinks(db, m.id, m.body, now);
}

/** D172: the stored body of one message without the secret part of its links. */
export async function eraseLinks(db: Db, id: string, body: string, now: Date): Promise<void> {
  await db.updateTable('outbox_messages').set({ body: redactLinks(body), links_erased_at: now }).where('id', '=', id).execute();
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
