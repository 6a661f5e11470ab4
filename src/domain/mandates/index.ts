// Machtiging: the hosted signing page's domain side (C2.3) and the sandbox signature (C2.6); the signing links
// themselves (C2.2) live in links.ts. Signing moves the connection to mandate_status active / registration_status
// ingediend with mandate_valid_from = signed_at (spec §3).
import type { Deps } from '../../deps.ts';
import type { Db } from '../../db/database.ts';
import { DomainError } from '../errors.ts';
import { hashSecret } from '../../lib/secrets.ts';
import { isoSeconds, isUuid } from '../accounts/format.ts';
import { formatAddress } from '../ean/ean.ts';
import { CURRENT_CLAUSE_VERSION, renderClause, sha256, type Locale } from './clauses.ts';
import { markOpenLinkSigned } from './links.ts';

export { CURRENT_CLAUSE_VERSION, CLAUSES, renderClause, type Locale } from './clauses.ts';
export {
  createMandateLinkForCpo,
  issueMandateLink,
  signingUrl,
  validateReturnUrl,
  type CpoMandateLink,
  type IssuedLink,
} from './links.ts';

const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/; // 32 random bytes, base64url

// ---- the signing page (C2.3) ----

export interface SigningFacts {
  linkId: string;
  locale: Locale;
  clauseVersion: string;
  clauseText: string;
  clauseSha256: string;
  operator: string;
  holder: string;
  signatoryName: string;
  ean: string;
  address: string;
  expiresAt: string;
  returnUrl: string | null;
}

export type SigningView =
  | { kind: 'not_found' }
  | { kind: 'expired' }
  | { kind: 'gone' }
  /** D28: a revocation voided the link (signed or not); a new link must be issued */
  | { kind: 'void' }
  | { kind: 'signed'; facts: SigningFacts; signedAt: string | null }
  | { kind: 'form'; facts: SigningFacts };

/** What the machtiging names: the connection's EAN and address, the account's name and signatory. */
const SIGNING_FACT_COLUMNS = [
  'c.ean_code',
  'c.street',
  'c.house_number',
  'c.house_number_addition',
  'c.postal_code',
  'c.city',
  'a.display_name',
  'a.signatory_full_name',
  'a.signatory_email',
] as const;

async function linkContext(db: Db, token: string) {
  if (!TOKEN_RE.test(token)) return undefined;
  return db
    .selectFrom('mandate_links as l')
    .innerJoin('connections as c', 'c.id', 'l.connection_id')
    .innerJoin('accounts as a', 'a.id', 'c.account_id')
    .select([
      'l.id as link_id',
      'l.locale',
      'l.return_url',
      'l.clause_version',
      'l.expires_at',
      'l.signed_at',
      'l.voided_at',
      'c.id as connection_id',
      'c.status',
      'c.mandate_status',
      'c.mandate_valid_from',
      ...SIGNING_FACT_COLUMNS,
    ])
    .where('l.token_hash', '=', hashSecret(token))
    .executeTakeFirst();
}

type LinkContext = NonNullable<Awaited<ReturnType<typeof linkContext>>>;

function factsOf(deps: Deps, ctx: LinkContext, locale: Locale): SigningFacts {
  const holder = ctx.display_name ?? ctx.signatory_full_name ?? '';
  const address = formatAddress(ctx);
  const clauseText = renderClause(ctx.clause_version, locale, {
    operator: deps.config.OPERATOR_NAME,
    holder,
    ean: ctx.ean_code,
    address,
  });
  return {
    linkId: ctx.link_id,
    locale,
    clauseVersion: ctx.clause_version,
    clauseText,
    clauseSha256: sha256(clauseText),
    operator: deps.config.OPERATOR_NAME,
    holder,
    signatoryName: ctx.signatory_full_name ?? '',
    ean: ctx.ean_code,
    address,
    expiresAt: isoSeconds(ctx.expires_at),
    returnUrl: ctx.return_url,
  };
}

function viewOf(deps: Deps, ctx: LinkContext | undefined, locale: Locale | undefined): SigningView {
  if (!ctx) return { kind: 'not_found' };
  if (ctx.voided_at) return { kind: 'void' };
  const facts = factsOf(deps, ctx, locale ?? ctx.locale);
  if (ctx.signed_at) return { kind: 'signed', facts, signedAt: isoSeconds(ctx.signed_at) };
  if (ctx.status !== 'active') return { kind: 'gone' };
  if (ctx.mandate_status === 'active') return { kind: 'signed', facts, signedAt: ctx.mandate_valid_from ? isoSeconds(ctx.mandate_valid_from) : null };
  if (ctx.expires_at.getTime() <= deps.clock().getTime()) return { kind: 'expired' };
  return { kind: 'form', facts };
}

export async function loadSigningView(deps: Deps, token: string, locale?: Locale): Promise<SigningView> {
  return viewOf(deps, await linkContext(deps.db, token), locale);
}

export interface SignInput {
  fullName: unknown;
  consent: unknown;
  clauseSha256: unknown;
  locale?: Locale | undefined;
  ip: string | null;
  userAgent: string | null;
}

export type SignOutcome =
  | SigningView
  | { kind: 'invalid'; facts: SigningFacts; errors: Array<'name' | 'consent'> }
  | { kind: 'stale'; facts: SigningFacts }
  | { kind: 'just_signed'; facts: SigningFacts; signedAt: string };

/** POST of the signing form. Records the evidence only on a valid, unexpired, untampered link. */
export async function signViaLink(deps: Deps, token: string, input: SignInput): Promise<SignOutcome> {
  return deps.db.transaction().execute(async (trx) => {
    const pre = await linkContext(trx, token);
    if (!pre) return { kind: 'not_found' } as const;
    // lock the link, then re-read: two POSTs of one form sign once
    await trx.selectFrom('mandate_links').select('id').where('id', '=', pre.link_id).forUpdate().execute();
    await trx.selectFrom('connections').select('id').where('id', '=', pre.connection_id).forUpdate().execute();
    const ctx = (await linkContext(trx, token))!;
    const view = viewOf(deps, ctx, input.locale);
    if (view.kind !== 'form') return view;
    const facts = view.facts;
    const name = typeof input.fullName === 'string' ? input.fullName.trim().slice(0, 200) : '';
    const consent = input.consent === 'yes' || input.consent === 'on' || input.consent === true || input.consent === 'true';
    const errors: Array<'name' | 'consent'> = [];
    if (!name) errors.push('name');
    if (!consent) errors.push('consent');
    if (errors.length) return { kind: 'invalid', facts, errors };
    // the text shown must be the text signed: details changed since the page was rendered → reload
    if (input.clauseSha256 !== facts.clauseSha256) return { kind: 'stale', facts };
    const now = deps.clock();
    await recordSignature(trx, deps, {
      connectionId: ctx.connection_id,
      linkId: ctx.link_id,
      channel: 'signing_page',
      name,
      email: ctx.signatory_email,
      facts,
      ip: input.ip,
      userAgent: input.userAgent,
      now,
    });
    await trx.updateTable('mandate_links').set({ signed_at: now }).where('id', '=', ctx.link_id).execute();
    return { kind: 'just_signed', facts, signedAt: isoSeconds(now) };
  });
}

async function recordSignature(
  trx: Db,
  deps: Deps,
  s: {
    connectionId: string;
    linkId: string | null;
    channel: 'signing_page' | 'sandbox_helper';
    name: string;
    email: string | null;
    facts: Pick<SigningFacts, 'clauseVersion' | 'clauseSha256' | 'locale' | 'ean' | 'address'>;
    ip: string | null;
    userAgent: string | null;
    now: Date;
  },
): Promise<void> {
  await trx
    .insertInto('mandates')
    .values({
      connection_id: s.connectionId,
      mandate_link_id: s.linkId,
      channel: s.channel,
      signatory_name: s.name,
      signatory_email: s.email,
      signed_at: s.now,
      clause_version: s.facts.clauseVersion,
      clause_sha256: s.facts.clauseSha256,
      locale: s.facts.locale,
      ean_code: s.facts.ean,
      address: s.facts.address,
      client_ip: s.ip,
      user_agent: s.userAgent ? s.userAgent.slice(0, 500) : null,
      created_at: s.now,
    })
    .execute();
  // spec §3: pending → active, concept → ingediend, mandate_valid_from = signed_at
  await trx
    .updateTable('connections')
    .set({ mandate_status: 'active', registration_status: 'ingediend', mandate_valid_from: s.now, updated_at: s.now })
    .where('id', '=', s.connectionId)
    .execute();
}

export interface SandboxSignResponse {
  ok: true;
  connection_id: string;
  account_id: string;
  mandate_status: 'active';
  registration_status: 'ingediend';
  mandate_valid_from: string;
  clause_version: string;
}

/**
 * Sign the pending machtiging of a connection as the customer would (sandbox helper C2.6, test factories): the
 * same evidence as the page records, and the open signing link, if any, is marked signed with it.
 * partnerId, when given, limits it to that partner's connections (404 otherwise).
 */
export async function signMandateAsCustomer(
  deps: Deps,
  connectionId: string,
  opts: { partnerId?: string; fullName?: string | null; ip?: string | null; userAgent?: string | null } = {},
): Promise<SandboxSignResponse> {
  const notFound = new DomainError('connection_not_found', 'No such connection for this caller.');
  if (!isUuid(connectionId)) throw notFound;
  return deps.db.transaction().execute(async (trx) => {
    const c = await trx
      .selectFrom('connections as c')
      .innerJoin('accounts as a', 'a.id', 'c.account_id')
      .select([
        'c.id',
        'c.account_id',
        'c.status',
        'c.mandate_status',
        'a.partner_id',
        ...SIGNING_FACT_COLUMNS,
      ])
      .where('c.id', '=', connectionId)
      .forUpdate()
      .executeTakeFirst();
    if (!c || (opts.partnerId !== undefined && c.partner_id !== opts.partnerId)) throw notFound;
    if (c.status !== 'active') throw new DomainError('connection_not_active', 'The connection is archived.');
    if (c.mandate_status === 'active') {
      throw new DomainError('mandate_already_active', 'The machtiging of this connection is already signed.');
    }
    const locale: Locale = 'nl';
    const address = formatAddress(c);
    const clauseText = renderClause(CURRENT_CLAUSE_VERSION, locale, {
      operator: deps.config.OPERATOR_NAME,
      holder: c.display_name ?? c.signatory_full_name ?? '',
      ean: c.ean_code,
      address,
    });
    const name = (opts.fullName ?? '').trim() || c.signatory_full_name || 'Sandbox signatory';
    const now = deps.clock();
    // C2.6 as the customer would: the open link is the one signed (its page confirms; it cannot be signed again)
    const linkId = await markOpenLinkSigned(trx, c.id, now);
    await recordSignature(trx, deps, {
      connectionId: c.id,
      linkId,
      channel: 'sandbox_helper',
      name,
      email: c.signatory_email,
      facts: { clauseVersion: CURRENT_CLAUSE_VERSION, clauseSha256: sha256(clauseText), locale, ean: c.ean_code, address },
      ip: opts.ip ?? null,
      userAgent: opts.userAgent ?? null,
      now,
    });
    return {
      ok: true,
      connection_id: c.id,
      account_id: c.account_id,
      mandate_status: 'active',
      registration_status: 'ingediend',
      mandate_valid_from: isoSeconds(now),
      clause_version: CURRENT_CLAUSE_VERSION,
    };
  });
}
