// C1.1 client-credentials tokens; resolution of every bearer credential to a Principal (C1.2–C1.4).
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { deleteInBatches } from '../../db/batched-delete.ts';
import { DomainError } from '../errors.ts';
import { hashSecret, randomSecret, secretHint } from '../../lib/secrets.ts';
import { CPO_SCOPES, PERSONAL_SCOPES, PREFIX } from './scopes.ts';
import { noteTokenUse } from './personal-tokens.ts';
import { announceEndedOwners } from '../charging/stream-slots.ts';

export const ACCESS_TOKEN_TTL_SECONDS = 3600;
/** D235: an expired access token's row is kept a day, so a token refused an hour ago can still be looked up */
export const EXPIRED_ACCESS_TOKEN_KEPT_MS = 86_400_000;

export type Principal =
  | { kind: 'cpo'; partnerId: string; clientId: string; tokenId: string; scopes: string[] }
  | { kind: 'partner'; partnerId: string; keyId: string; environment: 'sandbox' | 'production' }
  | { kind: 'personal'; userId: string; tokenId: string; scopes: string[] };

/** The checked body of POST /oauth/token: the route's schema has made every field a string (or absent). */
export interface TokenRequest {
  grant_type?: string | undefined;
  client_id?: string | undefined;
  client_secret?: string | undefined;
  scope?: string | undefined;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  scope: string;
}

/** C1.1: issue a one-hour access token for a CPO client. Errors carry the OAuth codes of C1.1. */
/** Whether client_id and client_secret name a live CPO client (the token endpoint's per-client count, D125). */
export async function clientAuthenticates(deps: Deps, clientId: string, clientSecret: string): Promise<boolean> {
  const client = await deps.db
    .selectFrom('cpo_clients')
    .select('secret_hash')
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return client !== undefined && client.secret_hash === hashSecret(clientSecret);
}

export async function issueClientCredentialsToken(deps: Deps, req: TokenRequest): Promise<TokenResponse> {
  // C1.1: an absent or empty field is invalid_request, checked in this order (grant type before the client)
  if (!req.grant_type) throw new DomainError('invalid_request', 'grant_type is required');
  if (req.grant_type !== 'client_credentials') {
    throw new DomainError('unsupported_grant_type', 'only grant_type=client_credentials is supported');
  }
  if (!req.client_id) throw new DomainError('invalid_request', 'client_id is required');
  if (!req.client_secret) throw new DomainError('invalid_request', 'client_secret is required');
  const client = await deps.db
    .selectFrom('cpo_clients')
    .selectAll()
    .where('client_id', '=', req.client_id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (!client || client.secret_hash !== hashSecret(req.client_secret)) {
    throw new DomainError('invalid_client', 'unknown client or wrong client_secret');
  }
  const requested = req.scope ? req.scope.split(/\s+/).filter(Boolean) : [];
  const missing = requested.filter((s) => !client.scopes.includes(s));
  if (missing.length) {
    throw new DomainError('invalid_scope', `the client does not hold: ${missing.join(' ')}`);
  }
  const scopes = requested.length ? [...new Set(requested)] : client.scopes;
  const token = randomSecret(PREFIX.cpoAccessToken);
  const now = deps.clock();
  await deps.db
    .insertInto('access_tokens')
    .values({
      token_hash: hashSecret(token),
      cpo_client_id: client.id,
      partner_id: client.partner_id,
      scopes,
      expires_at: new Date(now.getTime() + ACCESS_TOKEN_TTL_SECONDS * 1000),
      created_at: now,
    })
    .execute();
  return { access_token: token, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_SECONDS, scope: scopes.join(' ') };
}

/**
 * Resolve a bearer credential to a Principal, or null when it is unknown, expired or revoked.
 * A partner key of the other environment resolves (the caller decides: 401 with detail, spec §5).
 */
export async function resolveBearer(deps: Deps, bearer: string): Promise<Principal | null> {
  const h = hashSecret(bearer);
  if (bearer.startsWith(PREFIX.partnerLive) || bearer.startsWith(PREFIX.partnerTest)) {
    const key = await deps.db
      .selectFrom('partner_api_keys')
      .select(['id', 'partner_id', 'environment'])
      .where('key_hash', '=', h)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return key ? { kind: 'partner', partnerId: key.partner_id, keyId: key.id, environment: key.environment } : null;
  }
  if (bearer.startsWith(PREFIX.cpoAccessToken)) {
    const t = await deps.db
      .selectFrom('access_tokens')
      .innerJoin('cpo_clients', 'cpo_clients.id', 'access_tokens.cpo_client_id')
      .select(['access_tokens.id', 'access_tokens.partner_id', 'access_tokens.scopes', 'access_tokens.expires_at', 'cpo_clients.client_id'])
      .where('access_tokens.token_hash', '=', h)
      .where('access_tokens.revoked_at', 'is', null)
      .where('cpo_clients.revoked_at', 'is', null)
      .executeTakeFirst();
    if (!t || t.expires_at.getTime() <= deps.clock().getTime()) return null;
    return { kind: 'cpo', partnerId: t.partner_id, clientId: t.client_id, tokenId: t.id, scopes: t.scopes };
  }
  if (bearer.startsWith(PREFIX.personalToken)) {
    const t = await deps.db
      .selectFrom('personal_tokens')
      .select(['id', 'user_id', 'scopes'])
      .where('token_hash', '=', h)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (!t) return null;
    noteTokenUse(deps, t.id); // C7.2: the dashboard lists each token's last use
    return { kind: 'personal', userId: t.user_id, tokenId: t.id, scopes: t.scopes };
  }
  return null;
}

/**
 * D235: delete the access tokens that expired more than a day ago (the `retention` job), in batches; returns how many.
 * An expired token already resolves to nothing (401 like an unknown one), so its row only serves a support question.
 */
export async function deleteExpiredAccessTokens(deps: Deps): Promise<number> {
  const cutoff = new Date(deps.clock().getTime() - EXPIRED_ACCESS_TOKEN_KEPT_MS);
  return deleteInBatches(deps.db, 'access_tokens', sql`expires_at < ${cutoff}`);
}

// ---- minting (admin API, seed, tests) ----

async function requirePartner(deps: Deps, partnerId: string): Promise<void> {
  const p = await deps.db.selectFrom('partners').select('id').where('id', '=', partnerId).executeTakeFirst();
  if (!p) throw new DomainError('partner_not_found', `No partner ${partnerId}`);
}

async function requireUser(deps: Deps, userId: string): Promise<void> {
  const u = await deps.db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst();
  if (!u) throw new DomainError('user_not_found', `No user ${userId}`);
}

/** C1.6: link an account to the user who owns it (the Personal API then shows its chargers and energy). */
export async function linkAccountOwner(deps: Deps, userId: string, accountId: string): Promise<{ ok: true }> {
  await requireUser(deps, userId);
  return deps.db.transaction().execute(async (trx) => {
    const before = await trx.selectFrom('accounts').select('owner_user_id').where('id', '=', accountId).forUpdate().executeTakeFirst();
    if (!before) throw new DomainError('account_not_found', `No account ${accountId}`);
    await trx.updateTable('accounts').set({ owner_user_id: userId, updated_at: deps.clock() }).where('id', '=', accountId).execute();
    // D127: the chargers the previous owner registered on the account go with it (a house sold with its charger):
    // the previous owner no longer sees or controls them through their own registration
    if (before.owner_user_id !== null && before.owner_user_id !== userId) {
      await trx
        .updateTable('chargers')
        .set({ owner_user_id: userId })
        .where('account_id', '=', accountId)
        .where('owner_user_id', '=', before.owner_user_id)
        .execute();
    }
    return { ok: true as const };
  });
}

export async function createPartner(
  deps: Deps,
  input: { name: string; rolling_days?: number | undefined; rolling_cap?: number | undefined },
): Promise<{ partner_id: string; name: string }> {
  const row = await deps.db
    .insertInto('partners')
    .values({
      name: input.name,
      rolling_days: input.rolling_days ?? deps.config.PARTNER_ROLLING_DAYS,
      rolling_cap: input.rolling_cap ?? deps.config.PARTNER_ROLLING_CAP,
    })
    .returning(['id', 'name'])
    .executeTakeFirstOrThrow();
  return { partner_id: row.id, name: row.name };
}

/** Mint a partner API key (shown once) and revoke the partner's earlier key: one active key (spec §5). */
export async function mintPartnerApiKey(
  deps: Deps,
  partnerId: string,
  opts: { legacy_prefix?: boolean | undefined } = {},
): Promise<{ api_key: string }> {
  await requirePartner(deps, partnerId);
  const env = deps.config.APP_ENV;
  // C1.3: a legacy sandbox key carries the production prefix; its record says sandbox.
  const prefix = env === 'production' || opts.legacy_prefix ? PREFIX.partnerLive : PREFIX.partnerTest;
  const apiKey = randomSecret(prefix);
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('partner_api_keys')
      .set({ revoked_at: deps.clock() })
      .where('partner_id', '=', partnerId)
      .where('revoked_at', 'is', null)
      .execute();
    await trx
      .insertInto('partner_api_keys')
      .values({ partner_id: partnerId, key_hash: hashSecret(apiKey), key_hint: apiKey.slice(0, 8) + '…' + apiKey.slice(-4), environment: env })
      .execute();
  });
  return { api_key: apiKey };
}

export async function createCpoClient(
  deps: Deps,
  partnerId: string,
  opts: { scopes?: string[] | undefined } = {},
): Promise<{ client_id: string; client_secret: string; scopes: string[] }> {
  await requirePartner(deps, partnerId);
  const scopes = opts.scopes?.length ? [...new Set(opts.scopes)] : [...CPO_SCOPES];
  const bad = scopes.filter((s) => !(CPO_SCOPES as readonly string[]).includes(s));
  if (bad.length) throw new DomainError('invalid_request', `unknown CPO scopes: ${bad.join(', ')}`);
  const clientId = randomSecret(PREFIX.cpoClientId, 12);
  const secret = randomSecret(PREFIX.cpoClientSecret);
  await deps.db
    .insertInto('cpo_clients')
    .values({ partner_id: partnerId, client_id: clientId, secret_hash: hashSecret(secret), scopes })
    .execute();
  return { client_id: clientId, client_secret: secret, scopes };
}

/**
 * D128: revoke a CPO client (a leaked secret, an integration retired) and every access token it holds, at once; the
 * token endpoint then refuses the client (`invalid_client`) and its tokens are 401. A client already revoked answers
 * the same, with no token left to revoke.
 */
export async function revokeCpoClient(deps: Deps, clientId: string): Promise<{ client_id: string; revoked_tokens: number }> {
  // a client id is a prefix and base64url; anything else (a NUL, a space) names no client and never reaches the database
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(clientId)) throw new DomainError('cpo_client_not_found', 'No such CPO client');
  return deps.db.transaction().execute(async (trx) => {
    const client = await trx.selectFrom('cpo_clients').select(['id', 'revoked_at']).where('client_id', '=', clientId).forUpdate().executeTakeFirst();
    if (!client) throw new DomainError('cpo_client_not_found', `No CPO client ${clientId}`);
    const now = deps.clock();
    if (client.revoked_at === null) await trx.updateTable('cpo_clients').set({ revoked_at: now }).where('id', '=', client.id).execute();
    // D243: only the tokens still alive: an expired one already answers 401 and waits for the retention job (D235),
    // so counting it told the operator of more live tokens cut off than there were
    const tokens = await trx
      .updateTable('access_tokens')
      .set({ revoked_at: now })
      .where('cpo_client_id', '=', client.id)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return { client_id: clientId, revoked_tokens: Number(tokens.numUpdatedRows) };
  });
}

export async function createUser(
  deps: Deps,
  input: { email: string; full_name?: string | null | undefined },
): Promise<{ user_id: string }> {
  const row = await deps.db
    .insertInto('users')
    .values({ email: input.email.trim(), full_name: input.full_name ?? null })
    .onConflict((oc) => oc.expression(sql`lower(email)`).doUpdateSet({ full_name: sql`coalesce(excluded.full_name, users.full_name)` }))
    .returning('id')
    .executeTakeFirstOrThrow();
  return { user_id: row.id };
}

/** Mint a personal API token (shown once), revoking the user's earlier token (C1.6). */
export async function mintPersonalToken(deps: Deps, userId: string, scopes: string[]): Promise<{ token: string }> {
  const bad = scopes.filter((s) => !(PERSONAL_SCOPES as readonly string[]).includes(s));
  if (bad.length) throw new DomainError('invalid_request', `unknown personal API scopes: ${bad.join(', ')}`);
  await requireUser(deps, userId);
  scopes = [...new Set(scopes)];
  const token = randomSecret(PREFIX.personalToken);
  const revoked = await deps.db.transaction().execute(async (trx) => {
    const earlier = await trx
      .updateTable('personal_tokens')
      .set({ revoked_at: deps.clock() })
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .returning('id')
      .execute();
    await trx.insertInto('personal_tokens').values({ user_id: userId, token_hash: hashSecret(token), scopes, hint: secretHint(token) }).execute();
    return earlier.map((t) => t.id);
  });
  await announceEndedOwners(deps, revoked); // the earlier token's open push streams end (D64)
  return { token };
}
