// C3.4 / C6.7: claiming a draft. The claim page shows the pre-registration; confirming it creates the user
// (or links the existing one by e-mail), a concept account (with the connection when EAN and address are
// known, through the accounts area's createConceptAccount), couples a pre-coupled charger, and hands back
// the machtiging signing link (mandates area's issueMandateLink). A draft is claimed once: the first
// confirmation moves it open → claiming atomically, so a second one finds it taken (410), never a second
// user or account.
import type { Deps } from '../../deps.ts';
import type { PartnerDraftsTable } from '../../db/tables/partner.ts';
import type { Selectable } from 'kysely';
import { createConceptAccount } from '../accounts/index.ts';
import { issueMandateLink, type Locale } from '../mandates/index.ts';
import { createUser } from '../credentials/tokens.ts';
import { isDomainError } from '../errors.ts';
import { hashSecret } from '../../lib/secrets.ts';
import { looksLikeClaimToken } from './tokens.ts';
import { validEan } from './validate.ts';

export type Draft = Selectable<PartnerDraftsTable> & { partner_name: string };

export type ClaimLookup = { state: 'not_found' } | { state: 'claimed'; draft: Draft } | { state: 'open'; draft: Draft };

export async function findClaim(deps: Deps, token: string): Promise<ClaimLookup> {
  if (!looksLikeClaimToken(token)) return { state: 'not_found' };
  const draft = await deps.db
    .selectFrom('partner_drafts as d')
    .innerJoin('partners as p', 'p.id', 'd.partner_id')
    .selectAll('d')
    .select('p.name as partner_name')
    .where('d.claim_token_hash', '=', hashSecret(token))
    .executeTakeFirst();
  if (!draft) return { state: 'not_found' };
  return draft.status === 'open' ? { state: 'open', draft } : { state: 'claimed', draft };
}

export interface ClaimForm {
  street?: string | undefined;
  city?: string | undefined;
  ean?: string | undefined;
}

export type ClaimOutcome =
  | { state: 'not_found' }
  | { state: 'claimed' }
  | { state: 'invalid'; draft: Draft; code: string; message: string }
  | { state: 'done'; draft: Draft; userId: string; accountId: string; connectionId: string | null; mandateUrl: string | null };

export async function confirmClaim(deps: Deps, token: string, form: ClaimForm, locale: Locale): Promise<ClaimOutcome> {
  const found = await findClaim(deps, token);
  if (found.state !== 'open') return found.state === 'not_found' ? found : { state: 'claimed' };
  const d = found.draft;

  // what the connection would be: the draft's EAN, or the one the customer picks or enters
  let ean = d.ean_code;
  const entered = form.ean?.trim();
  if (!ean && entered) {
    ean = validEan(entered);
    const candidates = d.ean_candidates;
    if (!ean || (d.ean_status === 'candidates' && !candidates.includes(ean))) {
      return { state: 'invalid', draft: d, code: 'invalid_ean', message: 'ean' };
    }
  }
  const street = form.street?.trim().slice(0, 120) || null;
  const city = form.city?.trim().slice(0, 120) || d.city;
  const withConnection = !!(ean && d.postal_code && d.house_number);
  if (withConnection && (!street || !city)) return { state: 'invalid', draft: d, code: 'address_required', message: 'street' };

  const taken = await deps.db
    .updateTable('partner_drafts')
    .set({ status: 'claiming' })
    .where('id', '=', d.id)
    .where('status', '=', 'open')
    .returning('id')
    .executeTakeFirst();
  if (!taken) return { state: 'claimed' };

  let userId: string;
  let accountId: string;
  let connectionId: string | null = null;
  try {
    // an existing user (by e-mail, case-insensitive) is linked as is; otherwise the user is created
    const existing = await deps.db
      .selectFrom('users')
      .select('id')
      .where((eb) => eb(eb.fn('lower', ['email']), '=', d.email_lower))
      .executeTakeFirst();
    userId = existing?.id ?? (await createUser(deps, { email: d.email, full_name: d.contact_name ?? d.name })).user_id;
    const displayName = d.company_name ?? d.name;
    if (withConnection) {
      const r = await createConceptAccount(deps, {
        partnerId: d.partner_id,
        accessChannel: 'partner_claim',
        ownerUserId: userId,
        type: d.type,
        displayName,
        person: { full_name: d.contact_name ?? d.name, email: d.email },
        connection: {
          ean_code: ean!,
          street: street!,
          house_number: d.house_number!,
          house_number_addition: d.house_number_addition,
          postal_code: d.postal_code!,
          city: city!,
        },
      });
      accountId = r.account_id;
      connectionId = r.connection_id;
    } else {
      // no EAN or address yet: an account without a connection (createConceptAccount always makes one)
      const now = deps.clock();
      const a = await deps.db
        .insertInto('accounts')
        .values({
          partner_id: d.partner_id,
          owner_user_id: userId,
          access_channel: 'partner_claim',
          type: d.type,
          display_name: displayName,
          signatory_full_name: d.contact_name ?? d.name,
          signatory_email: d.email,
          created_at: now,
          updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      accountId = a.id;
    }
  } catch (err) {
    await deps.db.updateTable('partner_drafts').set({ status: 'open' }).where('id', '=', d.id).where('status', '=', 'claiming').execute();
    if (isDomainError(err)) return { state: 'invalid', draft: d, code: err.code, message: err.detail ?? err.code };
    throw err;
  }

  const now = deps.clock();
  if (d.charger_id) {
    await deps.db
      .updateTable('chargers')
      .set((eb) => ({ owner_user_id: userId, account_id: eb.fn.coalesce('account_id', eb.val(accountId)), updated_at: now }))
      .where('id', '=', d.charger_id)
      .where('owner_user_id', 'is', null)
      .execute();
  }
  await deps.db
    .updateTable('partner_drafts')
    .set({
      status: 'claimed',
      claimed_at: now,
      claimed_user_id: userId,
      claimed_account_id: accountId,
      claimed_connection_id: connectionId,
      ...(ean && !d.ean_code ? { ean_code: ean, ean_status: 'resolved' as const } : {}),
    })
    .where('id', '=', d.id)
    .execute();

  let mandateUrl: string | null = null;
  if (connectionId) {
    try {
      mandateUrl = (await issueMandateLink(deps, { connectionId, locale })).url;
    } catch (err) {
      deps.logger.error({ err, draftId: d.id }, 'claim: signing link could not be issued');
    }
  }
  return { state: 'done', draft: { ...d, status: 'claimed' }, userId, accountId, connectionId, mandateUrl };
}
