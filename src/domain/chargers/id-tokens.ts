// C4.4 id-token policy per charger: accept_all (default for home chargers) or list (tokens with a status and
// an optional expiry). Authorize, StartTransaction and TransactionEvent answer this verdict.
import { sql } from 'kysely';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { DomainError } from '../errors.ts';
import { ensureOcppCharger, requireCharger } from './ocpp-charger.ts';
import { isoUtc as utc } from '../../lib/time.ts';

/** C4.4 what an id tag is answered. */
export type IdTagVerdict = 'Accepted' | 'Blocked' | 'Expired' | 'Invalid';

export async function idTagVerdict(deps: Deps, chargerId: string, idTag: string): Promise<{ verdict: IdTagVerdict; expiresAt: Date | null }> {
  const row = await deps.db
    .selectFrom('ocpp_chargers')
    .leftJoin('ocpp_id_tokens', (j) =>
      // OCPP id tokens are case-insensitive (1.6 CiString, 2.0.1 "IdToken is case insensitive")
      j.onRef('ocpp_id_tokens.charger_id', '=', 'ocpp_chargers.charger_id').on(sql`lower(ocpp_id_tokens.id_token)`, '=', sql`lower(${idTag})`),
    )
    .select(['ocpp_chargers.auth_policy', 'ocpp_id_tokens.status', 'ocpp_id_tokens.expires_at'])
    .where('ocpp_chargers.charger_id', '=', chargerId)
    .executeTakeFirst();
  return verdictOfRow(row, deps.clock());
}

/** The verdict from a charger's auth policy and its token row (none: not listed), as of `now`. */
export function verdictOfRow(
  row: { auth_policy: string; status: IdTagVerdict | null; expires_at: Date | null } | undefined,
  now: Date,
): { verdict: IdTagVerdict; expiresAt: Date | null } {
  if (!row || row.auth_policy === 'accept_all') return { verdict: 'Accepted', expiresAt: null };
  if (!row.status) return { verdict: 'Invalid', expiresAt: null };
  if (row.expires_at && row.expires_at.getTime() <= now.getTime()) return { verdict: 'Expired', expiresAt: row.expires_at };
  return { verdict: row.status, expiresAt: row.expires_at };
}

export const IdTokensInput = z.object({
  policy: z.enum(['accept_all', 'list']),
  tokens: z
    .array(
      z.object({
        id_token: z.string().min(1).max(36),
        status: z.enum(['Accepted', 'Blocked', 'Expired', 'Invalid']),
        expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
      }),
    )
    .max(1000)
    .default([]),
});
export type IdTokensInput = z.input<typeof IdTokensInput>;

export interface IdTokensView {
  charger_id: string;
  policy: 'accept_all' | 'list';
  tokens: { id_token: string; status: IdTagVerdict; expires_at: string | null }[];
}

/** PUT /admin/chargers/:charger_id/id-tokens: replaces the policy and the whole token list. */
export async function setIdTokens(deps: Deps, chargerId: string, input: IdTokensInput): Promise<IdTokensView> {
  const parsed = IdTokensInput.safeParse(input);
  if (!parsed.success) throw new DomainError('invalid_request', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  const body = parsed.data;
  // D141: a token listed twice must say the same thing twice; an operator who appends `TAG Blocked` below `TAG
  // Accepted` means to block it, and keeping the first line answered 200 while the card went on working
  const first = new Map<string, { i: number; status: string; expires_at: string | null }>();
  for (const [i, t] of body.tokens.entries()) {
    const k = t.id_token.toLowerCase();
    const was = first.get(k);
    if (!was) first.set(k, { i, status: t.status, expires_at: t.expires_at ?? null });
    else if (was.status !== t.status || was.expires_at !== (t.expires_at ?? null)) {
      throw new DomainError('invalid_request', `tokens.${i}: ${t.id_token} is listed at ${was.i} too (tokens compare case-insensitively) with another status or expiry; list it once`);
    }
  }
  await requireCharger(deps, chargerId);
  await deps.db.transaction().execute(async (trx) => {
    await ensureOcppCharger(trx, chargerId);
    await trx.updateTable('ocpp_chargers').set({ auth_policy: body.policy }).where('charger_id', '=', chargerId).execute();
    await trx.deleteFrom('ocpp_id_tokens').where('charger_id', '=', chargerId).execute();
    // tokens that differ only in case are one token (OCPP compares them case-insensitively): the first one listed
    // is kept, as for a token listed twice
    const seen = new Set<string>();
    const tokens = body.tokens.filter((t) => !seen.has(t.id_token.toLowerCase()) && seen.add(t.id_token.toLowerCase()));
    if (tokens.length) {
      await trx
        .insertInto('ocpp_id_tokens')
        .values(
          tokens.map((t) => ({
            charger_id: chargerId,
            id_token: t.id_token,
            status: t.status,
            expires_at: t.expires_at ? new Date(t.expires_at) : null,
          })),
        )
        .onConflict((oc) => oc.columns(['charger_id', 'id_token']).doNothing())
        .execute();
    }
  });
  return viewOfIdTokens(deps, chargerId, body.policy);
}

async function viewOfIdTokens(deps: Deps, chargerId: string, policy: IdTokensView['policy']): Promise<IdTokensView> {
  const tokens = await deps.db.selectFrom('ocpp_id_tokens').selectAll().where('charger_id', '=', chargerId).orderBy('id_token').execute();
  return {
    charger_id: chargerId,
    policy,
    tokens: tokens.map((t) => ({ id_token: t.id_token, status: t.status, expires_at: t.expires_at ? utc(t.expires_at) : null })),
  };
}

/**
 * GET /admin/chargers/:charger_id/id-tokens (D144): the policy and the list as they stand, so an operator can add a
 * card to the list the PUT replaces without reading the database.
 */
export async function getIdTokens(deps: Deps, chargerId: string): Promise<IdTokensView> {
  await requireCharger(deps, chargerId);
  const row = await deps.db.selectFrom('ocpp_chargers').select('auth_policy').where('charger_id', '=', chargerId).executeTakeFirst();
  return viewOfIdTokens(deps, chargerId, (row?.auth_policy ?? 'accept_all') as IdTokensView['policy']);
}

export { utc };
