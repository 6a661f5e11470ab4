// The life of a signing link (C2.2, D28): issued while the machtiging is pending (one open link per connection),
// signed through the page or by the sandbox helper, expired after MANDATE_LINK_TTL_DAYS, or voided by a revocation
// (connections:update with acknowledge_mandate_lapses, which sets voided_at). Open = unsigned, not voided, unexpired.
import crypto from 'node:crypto';
import type { Deps } from '../../deps.ts';
import type { Db } from '../../db/database.ts';
import { DomainError } from '../errors.ts';
import { hashSecret } from '../../lib/secrets.ts';
import { isoSeconds, isUuid } from '../accounts/format.ts';
import { assertActive, findTargetConnection, type TargetInput } from '../connections/target.ts';
import { CURRENT_CLAUSE_VERSION, type Locale } from './clauses.ts';

/** The open links of a connection, newest first: the one a new POST hands back and the one a signature uses. */
function openLinks(db: Db, connectionId: string, now: Date) {
  return db
    .selectFrom('mandate_links')
    .where('connection_id', '=', connectionId)
    .where('signed_at', 'is', null)
    .where('voided_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc');
}

/**
 * C2.6: a signature made without the page (the sandbox helper) is the customer's answer to the open link, so that
 * link is marked signed like a signature through it would: its page confirms, and it cannot be signed again.
 * Runs in the signing transaction, which holds the connection's row lock. The id of the marked link, or null.
 */
export async function markOpenLinkSigned(trx: Db, connectionId: string, now: Date): Promise<string | null> {
  const open = await openLinks(trx, connectionId, now).select('id').executeTakeFirst();
  if (!open) return null;
  await trx.updateTable('mandate_links').set({ signed_at: now }).where('id', '=', open.id).execute();
  return open.id;
}

export interface IssuedLink {
  mandate_link_id: string;
  url: string;
  expires_at: string;
  idempotent: boolean;
}

/**
 * The page's address. English is carried in it (`?locale=en`); without a locale the page takes the link's own
 * (`linkLocale`, what the first issue asked), so Dutch asked of a link issued in English is `?locale=nl`.
 */
export function signingUrl(deps: Deps, token: string, locale: Locale, linkLocale: Locale = 'nl'): string {
  return `${deps.config.PUBLIC_BASE_URL}/mandates/${token}${locale === 'en' || locale !== linkLocale ? `?locale=${locale}` : ''}`;
}

/** return_url (C2.2): https, or http on localhost. The schema has made it a string; its rule is checked here. */
export function validateReturnUrl(v: string | null | undefined): string | null {
  if (!v) return null;
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new DomainError('invalid_request', 'return_url must be an absolute URL.');
  }
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
  if (!(u.protocol === 'https:' || (u.protocol === 'http:' && local))) {
    throw new DomainError('invalid_request', 'return_url must use https (http only on localhost).');
  }
  return u.toString();
}

/**
 * Issue (or return the open) signing link of a connection. No tenancy check: the CPO route and the partner
 * claim page check ownership before calling. One active mandate per connection (C2.2): an unexpired, unsigned
 * link comes back with idempotent: true (D231: in the locale asked now, with the return_url asked now); a signed
 * mandate gives 409 mandate_already_active.
 */
export async function issueMandateLink(
  deps: Deps,
  opts: { connectionId: string; locale?: Locale; returnUrl?: string },
): Promise<IssuedLink> {
  const returnUrl = validateReturnUrl(opts.returnUrl);
  if (!isUuid(opts.connectionId)) throw new DomainError('connection_not_found', 'No such connection.');
  const now = deps.clock();
  return deps.db.transaction().execute(async (trx) => {
    // the connection row lock serialises concurrent issues: one open link per connection
    const c = await trx
      .selectFrom('connections')
      .select(['id', 'status', 'mandate_status'])
      .where('id', '=', opts.connectionId)
      .forUpdate()
      .executeTakeFirst();
    if (!c) throw new DomainError('connection_not_found', 'No such connection.');
    if (c.status !== 'active') throw new DomainError('connection_not_active', 'The connection is archived.');
    if (c.mandate_status === 'active') {
      throw new DomainError('mandate_already_active', 'The machtiging of this connection is already signed.');
    }
    const open = await openLinks(trx, c.id, now).select(['id', 'token_encrypted', 'expires_at', 'locale']).executeTakeFirst();
    if (open) {
      // D231: the same link, with what this request asks: its locale in the address, its return_url on the link
      // (where the page sends the customer after signing); what the request leaves out stays as it was
      if (returnUrl) await trx.updateTable('mandate_links').set({ return_url: returnUrl }).where('id', '=', open.id).execute();
      return {
        mandate_link_id: open.id,
        url: signingUrl(deps, deps.cipher.decrypt(open.token_encrypted), opts.locale ?? open.locale, open.locale),
        expires_at: isoSeconds(open.expires_at),
        idempotent: true,
      };
    }
    const locale: Locale = opts.locale ?? 'nl';
    const token = crypto.randomBytes(32).toString('base64url');
    const expires = new Date(now.getTime() + deps.config.MANDATE_LINK_TTL_DAYS * 86_400_000);
    const row = await trx
      .insertInto('mandate_links')
      .values({
        connection_id: c.id,
        token_hash: hashSecret(token),
        token_encrypted: deps.cipher.encrypt(token),
        locale,
        return_url: returnUrl,
        clause_version: CURRENT_CLAUSE_VERSION,
        expires_at: expires,
        created_at: now,
      })
      .returning(['id', 'expires_at'])
      .executeTakeFirstOrThrow();
    return { mandate_link_id: row.id, url: signingUrl(deps, token, locale), expires_at: isoSeconds(row.expires_at), idempotent: false };
  });
}

/** A signing link of a CPO's connection: a new one, or (idempotent) the open one it already had. */
export interface CpoMandateLink {
  idempotent: boolean;
  mandate_link_id: string;
  connection_id: string;
  account_id: string;
  url: string;
  expires_at: string;
  clause_version: string;
  mandate_status: 'pending' | 'active';
}

/** POST /v1/mandate-links (C2.2): the caller's connection by connection_id, account_id or cpo_external_ref. */
export async function createMandateLinkForCpo(
  deps: Deps,
  partnerId: string,
  body: TargetInput & { locale?: Locale | undefined; return_url?: string | undefined },
): Promise<CpoMandateLink> {
  const returnUrl = validateReturnUrl(body.return_url);
  const c = await findTargetConnection(deps, partnerId, body);
  assertActive(c);
  const link = await issueMandateLink(deps, {
    connectionId: c.id,
    ...(body.locale ? { locale: body.locale } : {}),
    ...(returnUrl ? { returnUrl } : {}),
  });
  const clause = await deps.db.selectFrom('mandate_links').select('clause_version').where('id', '=', link.mandate_link_id).executeTakeFirstOrThrow();
  return {
    idempotent: link.idempotent,
    mandate_link_id: link.mandate_link_id,
    connection_id: c.id,
    account_id: c.account_id,
    url: link.url,
    expires_at: link.expires_at,
    clause_version: clause.clause_version,
    mandate_status: 'pending',
  };
}
