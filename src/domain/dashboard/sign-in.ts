// C7.2 the dashboard's sign-in: a one-time link by e-mail (through the outbox, so SMTP delivery, retries and the
// suppression list apply as to every e-mail), valid SIGN_IN_LINK_MINUTES and used once, then a session of
// SESSION_DAYS held in PostgreSQL (any process serves it) by the hash of its cookie, with its own CSRF token.
// Only hashes of the link and cookie secrets are stored. Whether an address belongs to a user is never told.
import crypto from 'node:crypto';
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { hashSecret, timingSafeEqualStr } from '../../lib/secrets.ts';
import { validEmail } from '../../lib/email.ts';
import { operatorOf } from '../../lib/operator.ts';
import { deleteInBatches } from '../../db/batched-delete.ts';
import { announceEndedOwners } from '../charging/stream-slots.ts';
import { DomainError } from '../errors.ts';
import { newUnsubscribeToken, queueMessages } from '../invites/outbox.ts';

export const SIGN_IN_LINK_MINUTES = 15;
export const SESSION_DAYS = 30;
/** links asked for one address within 15 minutes; more are not sent (the answer stays the same) */
const LINKS_PER_WINDOW = 5;

const secret = () => crypto.randomBytes(32).toString('base64url');

export type DashboardLocale = 'nl' | 'en';

const MAIL = {
  nl: {
    subject: 'Inloggen op uw dashboard',
    body: (url: string) =>
      `Klik op deze link om in te loggen op uw dashboard:\n\n${url}\n\nDe link werkt ${SIGN_IN_LINK_MINUTES} minuten en één keer. Heeft u niet om deze link gevraagd? Dan kunt u deze e-mail negeren.`,
  },
  en: {
    subject: 'Sign in to your dashboard',
    body: (url: string) =>
      `Open this link to sign in to your dashboard:\n\n${url}\n\nThe link works for ${SIGN_IN_LINK_MINUTES} minutes, once. Did you not ask for it? Then ignore this e-mail.`,
  },
} as const;

/**
 * Sends a sign-in link to the address when it is a user's (else nothing happens: the caller answers the same either
 * way). Returns the link only for the sandbox page to show it; null when nothing was sent.
 */
export async function requestSignInLink(deps: Deps, email: string, lc: DashboardLocale): Promise<string | null> {
  const address = validEmail(email)?.toLowerCase();
  if (!address) throw new DomainError('invalid_request', 'Enter a valid e-mail address.');
  const user = await deps.db.selectFrom('users').select('id').where(sql<string>`lower(email)`, '=', address).executeTakeFirst();
  if (!user) return null;
  const now = deps.clock();
  const recent = await deps.db
    .selectFrom('dashboard_sign_in_links')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', user.id)
    .where('created_at', '>', new Date(now.getTime() - SIGN_IN_LINK_MINUTES * 60_000))
    .executeTakeFirstOrThrow();
  if (Number(recent.n) >= LINKS_PER_WINDOW) return null;
  const token = secret();
  const url = `${deps.config.PUBLIC_BASE_URL}/dashboard/sign-in/${token}?locale=${lc}`;
  await deps.db.transaction().execute(async (trx) => {
    // the user's links gone stale a day ago are of no use any more (the table keeps only what may still be used)
    await trx.deleteFrom('dashboard_sign_in_links').where('user_id', '=', user.id).where('expires_at', '<', new Date(now.getTime() - 86_400_000)).execute();
    await trx
      .insertInto('dashboard_sign_in_links')
      .values({ user_id: user.id, token_hash: hashSecret(token), expires_at: new Date(now.getTime() + SIGN_IN_LINK_MINUTES * 60_000), created_at: now })
      .execute();
    await queueMessages(trx, now, [{ to: address, subject: MAIL[lc].subject, body: MAIL[lc].body(url), kind: 'dashboard_sign_in', unsubscribeToken: newUnsubscribeToken() }], operatorOf(deps.config));
  });
  return url;
}

/**
 * The address this sign-in link signs in to while it can still be used, else null. The page that asks to confirm
 * shows it (D234): someone sent another's link sees that it would sign them in as someone else.
 */
export async function signInLinkAddress(deps: Deps, token: string): Promise<string | null> {
  const row = await deps.db
    .selectFrom('dashboard_sign_in_links as l')
    .innerJoin('users as u', 'u.id', 'l.user_id')
    .select('u.email')
    .where('l.token_hash', '=', hashSecret(token))
    .where('l.used_at', 'is', null)
    .where('l.expires_at', '>', deps.clock())
    .executeTakeFirst();
  return row?.email ?? null;
}

export interface NewSession {
  /** the cookie's value (shown to the browser once; only its hash is kept) */
  cookie: string;
  expiresAt: Date;
}

/** Uses the link (once, within its time) and opens a session; throws sign_in_link_invalid otherwise. */
export async function signIn(deps: Deps, token: string): Promise<NewSession> {
  const now = deps.clock();
  return deps.db.transaction().execute(async (trx) => {
    const link = await trx
      .updateTable('dashboard_sign_in_links')
      .set({ used_at: now })
      .where('token_hash', '=', hashSecret(token))
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .returning('user_id')
      .executeTakeFirst();
    if (!link) throw new DomainError('sign_in_link_invalid', 'This sign-in link was used already or has expired; ask for a new one.');
    // the user's sessions that expired or were signed out a day ago are dropped
    await trx
      .deleteFrom('dashboard_sessions')
      .where('user_id', '=', link.user_id)
      .where((eb) => eb.or([eb('expires_at', '<', now), eb('revoked_at', '<', new Date(now.getTime() - 86_400_000))]))
      .execute();
    const cookie = secret();
    const expiresAt = new Date(now.getTime() + SESSION_DAYS * 86_400_000);
    await trx
      .insertInto('dashboard_sessions')
      .values({ user_id: link.user_id, token_hash: hashSecret(cookie), csrf_token: secret(), created_at: now, expires_at: expiresAt })
      .execute();
    return { cookie, expiresAt };
  });
}

export interface DashboardSession {
  id: string;
  userId: string;
  email: string;
  csrf: string;
}

/** The open session of this cookie value, or null (unknown, expired, signed out). */
export async function sessionOf(deps: Deps, cookie: string | undefined): Promise<DashboardSession | null> {
  if (!cookie || cookie.length > 100) return null;
  const row = await deps.db
    .selectFrom('dashboard_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.id', 's.user_id', 's.csrf_token', 'u.email'])
    .where('s.token_hash', '=', hashSecret(cookie))
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', deps.clock())
    .executeTakeFirst();
  return row ? { id: row.id, userId: row.user_id, email: row.email, csrf: row.csrf_token } : null;
}

/**
 * The retention job's part for the dashboard: sign-in links and sessions a day after they could last be used (a link
 * used or expired, a session signed out or expired), in batches; returns how many of each were deleted.
 */
export async function deleteEndedDashboardRows(deps: Deps): Promise<{ links: number; sessions: number }> {
  const dayAgo = new Date(deps.clock().getTime() - 86_400_000);
  const links = await deleteInBatches(deps.db, 'dashboard_sign_in_links', sql`expires_at < ${dayAgo} or used_at < ${dayAgo}`);
  const sessions = await deleteInBatches(deps.db, 'dashboard_sessions', sql`expires_at < ${dayAgo} or revoked_at < ${dayAgo}`);
  return { links, sessions };
}

export async function signOut(deps: Deps, sessionId: string): Promise<void> {
  await deps.db.updateTable('dashboard_sessions').set({ revoked_at: deps.clock() }).where('id', '=', sessionId).where('revoked_at', 'is', null).execute();
  await announceEndedOwners(deps, [sessionId]); // the session's live view ends (D64)
}

/** Constant-time comparison of a form's CSRF token with the expected one. */
export function csrfMatches(expected: string, sent: unknown): boolean {
  return typeof sent === 'string' && timingSafeEqualStr(expected, sent);
}
