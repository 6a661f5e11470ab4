// C7.2 personal API tokens on the dashboard: an owner holds several named tokens (at most MAX_TOKENS open), each
// with the scopes chosen; the secret is shown once (only its hash is kept), listed by name, hint and last use, and
// revoked at once. (The operator's POST /admin/users/:user_id/personal-token still replaces all of a user's tokens.)
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { hashSecret, randomSecret, secretHint } from '../../lib/secrets.ts';
import { announceEndedOwners } from '../charging/stream-slots.ts';
import { DomainError } from '../errors.ts';
import { PERSONAL_SCOPES, PREFIX } from './scopes.ts';
import { cutText } from '../../lib/nul.ts';

export const MAX_TOKENS = 10;

export interface PersonalTokenView {
  id: string;
  name: string | null;
  hint: string | null;
  scopes: string[];
  created_at: Date;
  last_used_at: Date | null;
}

/** The user's open tokens, newest first. */
export async function listPersonalTokens(deps: Deps, userId: string): Promise<PersonalTokenView[]> {
  return deps.db
    .selectFrom('personal_tokens')
    .select(['id', 'name', 'hint', 'scopes', 'created_at', 'last_used_at'])
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .execute();
}

/** A new token with these scopes; returns the secret (shown once). */
export async function createPersonalToken(deps: Deps, userId: string, input: { name: string; scopes: string[] }): Promise<{ id: string; token: string }> {
  const name = cutText(input.name.trim(), 60);
  if (name === '') throw new DomainError('invalid_request', 'Give the token a name.');
  const scopes = [...new Set(input.scopes)];
  if (scopes.length === 0) throw new DomainError('invalid_request', 'Choose at least one scope.');
  const bad = scopes.filter((s) => !(PERSONAL_SCOPES as readonly string[]).includes(s));
  if (bad.length) throw new DomainError('invalid_request', `Unknown scopes: ${bad.join(', ')}.`);
  const token = randomSecret(PREFIX.personalToken);
  const id = await deps.db.transaction().execute(async (trx) => {
    // one creation at a time per user, so the cap holds under concurrent requests
    await sql`select pg_advisory_xact_lock(hashtextextended(${'personal_tokens:' + userId}, 0))`.execute(trx);
    const open = await trx
      .selectFrom('personal_tokens')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .executeTakeFirstOrThrow();
    if (Number(open.n) >= MAX_TOKENS) throw new DomainError('too_many_tokens', `You hold ${MAX_TOKENS} tokens; revoke one first.`);
    const row = await trx
      .insertInto('personal_tokens')
      .values({ user_id: userId, token_hash: hashSecret(token), scopes, name, hint: secretHint(token) })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  });
  return { id, token };
}

/** Revokes one of the user's tokens (another user's id, or one revoked already, is not found). */
export async function revokePersonalToken(deps: Deps, userId: string, tokenId: string): Promise<void> {
  const r = await deps.db
    .updateTable('personal_tokens')
    .set({ revoked_at: deps.clock() })
    .where('id', '=', tokenId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) === 0) throw new DomainError('token_not_found', 'No such token.');
  await announceEndedOwners(deps, [tokenId]); // its open push streams end (D64)
}

/** When this process last noted each token's use (so most requests send no statement at all); bounded. */
const noted = new Map<string, number>();
const NOTE_EVERY_MS = 60_000;

/** Notes a token's use, at most once a minute (the answer never waits for it). */
export function noteTokenUse(deps: Deps, tokenId: string): void {
  const now = Date.now();
  const last = noted.get(tokenId);
  if (last !== undefined && now - last < NOTE_EVERY_MS) return;
  if (noted.size >= 10_000) noted.clear();
  noted.set(tokenId, now);
  deps.db
    .updateTable('personal_tokens')
    .set({ last_used_at: sql`now()` })
    .where('id', '=', tokenId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`)]))
    .execute()
    .catch((err) => deps.logger.warn({ err }, 'personal token: could not note its use'));
}
