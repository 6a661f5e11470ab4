// C3.4 / C6.7: claiming a draft. The claim page shows the pre-registration; confirming it creates the user
// (or links the existing one by e-mail), a concept account (with the connection when EAN and address are
// known, through the accounts area's createConceptAccount), couples a pre-coupled charger, and hands back
// the machtiging signing link (mandates area's issueMandateLink). A draft is claimed once: the confirmation
// locks the draft row and does every write in that one transaction (issue 10 item 7), so a second one waits and
// finds it claimed (410), never a second user or account, and a crash half-way leaves the draft open.
import type { Deps } from '../../deps.ts';
import type { PartnerDraftsTable } from '../../db/tables/partner.ts';
import { type Selectable, sql } from 'kysely';
import { joinTransaction } from '../../db/join-transaction.ts';
import { createConceptAccount } from '../accounts/index.ts';
import { normaliseIban } from '../accounts/validate.ts';
import { issueMandateLink, type Locale } from '../mandates/index.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { askExistingUserToConfirm, confirmsExistingUser, userOfDraftEmail } from './claim-existing-user.ts';
import { hashSecret } from '../../lib/secrets.ts';
import { looksLikeClaimToken } from './tokens.ts';
import { validEan, validHouseNumber, validPostalCode } from './validate.ts';
import { lookupDraftEan, withRegisterAddition } from './ean-lookup.ts';
import { cutText } from '../../lib/nul.ts';

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
  /** asked only when the draft has no address (issue 14 item 5) */
  postal_code?: string | undefined;
  house_number?: string | undefined;
  house_number_addition?: string | undefined;
  /** the payout account (spec: needed for eligibility); the claim page is where a claimed customer gives it */
  iban?: string | undefined;
  /** D129: the code of the confirmation link e-mailed to an existing user's address */
  confirm?: string | undefined;
}

export type ClaimOutcome =
  | { state: 'not_found' }
  | { state: 'claimed' }
  | { state: 'invalid'; draft: Draft; code: string; message: string; eanCandidates?: string[] }
  /** D129: the address is an existing user's; the confirmation link went to it */
  | { state: 'confirm_sent'; draft: Draft }
  | { state: 'done'; draft: Draft; userId: string; accountId: string; connectionId: string | null; next: NextStep };

/** What the customer still has to do after the claim (issue 14 item 5: never "nothing more to do" while unsigned). */
export type NextStep = { kind: 'sign'; url: string } | { kind: 'signed' } | { kind: 'contact' };

/**
 * The machtiging of the claimed connection: unsigned → its signing link (the open one, or a new one); signed → done;
 * no connection, or no link to be had → the customer is told to contact the operator.
 */
export async function nextStepAfterClaim(deps: Deps, connectionId: string | null, locale: Locale): Promise<NextStep> {
  if (!connectionId) return { kind: 'contact' };
  try {
    return { kind: 'sign', url: (await issueMandateLink(deps, { connectionId, locale })).url };
  } catch (err) {
    if (isDomainError(err) && err.code === 'mandate_already_active') return { kind: 'signed' };
    deps.logger.error({ err, connectionId }, 'claim: signing link could not be issued');
    return { kind: 'contact' };
  }
}

export async function confirmClaim(deps: Deps, token: string, form: ClaimForm, locale: Locale): Promise<ClaimOutcome> {
  const found = await findClaim(deps, token);
  if (found.state !== 'open') return found.state === 'not_found' ? found : { state: 'claimed' };
  let d = found.draft;
  const invalid = (code: string, message: string, eanCandidates?: string[]): ClaimOutcome => ({
    state: 'invalid',
    draft: found.draft,
    code,
    message,
    ...(eanCandidates ? { eanCandidates } : {}),
  });

  let iban: string | null;
  try {
    iban = normaliseIban(form.iban);
  } catch {
    return invalid('invalid_iban', 'iban');
  }

  // issue 14 item 5: a draft without an address asks for it, checked with the upload's Dutch rules
  const addressAsked = !(d.postal_code && d.house_number);
  if (addressAsked) {
    if (!form.postal_code?.trim() || !form.house_number?.trim()) return invalid('address_required', 'postal_code');
    const postalCode = validPostalCode(form.postal_code);
    if (!postalCode) return invalid('invalid_postal_code', 'postal_code');
    const house = validHouseNumber(form.house_number, form.house_number_addition);
    if (!house) return invalid('invalid_house_number', 'house_number');
    d = { ...d, postal_code: postalCode, ...house };
  }

  // what the connection will be: the draft's EAN, or the one the customer picks or enters, or the register's
  let ean = d.ean_code;
  const entered = form.ean?.trim();
  if (!ean && entered) {
    ean = validEan(entered);
    const candidates = d.ean_candidates;
    if (!ean || (!addressAsked && d.ean_status === 'candidates' && !candidates.includes(ean))) return invalid('invalid_ean', 'ean');
  }
  if (!ean && addressAsked) {
    const found = await lookupDraftEan(deps, null, { postal_code: d.postal_code!, house_number: d.house_number!, house_number_addition: d.house_number_addition });
    if (found.ean_status === 'resolved') ean = found.ean_code;
    else if (found.ean_status === 'candidates') return invalid('ean_choose', 'ean', found.ean_candidates);
  }
  // without an EAN no machtiging can be signed: ask for it rather than end with nothing to do (issue 14 item 5)
  if (!ean) return invalid('ean_required', 'ean');
  // D160: a number without an addition takes the register's addition of the chosen EAN at that number
  if (d.postal_code && d.house_number) {
    const completed = await withRegisterAddition(deps, { postal_code: d.postal_code, house_number: d.house_number, house_number_addition: d.house_number_addition }, ean);
    d = { ...d, house_number_addition: completed.house_number_addition };
  }
  const street = cutText(form.street?.trim() ?? '', 120) || null;
  const city = cutText(form.city?.trim() ?? '', 120) || d.city;
  const withConnection = !!(ean && d.postal_code && d.house_number);
  if (withConnection && (!street || !city)) return invalid('address_required', 'street');

  // D129: an address that is already a user's is linked only when its owner confirms, from a link e-mailed to it
  const existing = await userOfDraftEmail(deps, d.email_lower);
  if (existing && !confirmsExistingUser(deps, d.id, existing.id, form.confirm)) {
    // the user may be the one a concurrent confirmation of this very draft just made: then the draft is claimed
    if ((await findClaim(deps, token)).state !== 'open') return { state: 'claimed' };
    await askExistingUserToConfirm(deps, d, existing.id, token, locale);
    return { state: 'confirm_sent', draft: d };
  }
  const confirmedUserId = existing?.id ?? null;

  let done: { userId: string; accountId: string; connectionId: string | null } | null;
  try {
    done = await deps.db.transaction().execute(async (trx) => {
      // issue 10 item 7: one transaction from the draft's row lock to `claimed`. A concurrent confirmation
      // waits here and then finds the draft claimed (410); a failure or a crash anywhere below rolls everything
      // back and leaves the draft open, so it can be claimed again.
      const locked = await trx.selectFrom('partner_drafts').select('status').where('id', '=', d.id).forUpdate().executeTakeFirst();
      if (locked?.status !== 'open') return null;
      // the register reads on the transaction too: on PGlite the pool is the one connection this transaction holds
      const tdeps = { ...deps, db: joinTransaction(trx), eanRegister: deps.eanRegister.on(trx) };
      return claimInTransaction(tdeps, d, { ean, street, city, withConnection, iban, confirmedUserId });
    });
  } catch (err) {
    if (isDomainError(err)) return { state: 'invalid', draft: d, code: err.code, message: err.detail ?? err.code };
    throw err;
  }
  if (!done) return { state: 'claimed' };
  const { userId, accountId, connectionId } = done;

  const next = await nextStepAfterClaim(deps, connectionId, locale);
  return { state: 'done', draft: { ...d, status: 'claimed' }, userId, accountId, connectionId, next };
}

/** The claim's writes, all on the claim's transaction (tdeps.db): user, account (and connection), charger, draft. */
async function claimInTransaction(
  tdeps: Deps,
  d: Draft,
  c: { ean: string | null; street: string | null; city: string | null; withConnection: boolean; iban: string | null; confirmedUserId: string | null },
): Promise<{ userId: string; accountId: string; connectionId: string | null }> {
  // an existing user (by e-mail, case-insensitive) is linked as is when its owner confirmed (D129); otherwise the
  // user is created
  const existing = await userOfDraftEmail(tdeps, d.email_lower);
  // a user made with this address between the check and here has not confirmed: nothing is written
  if (existing && existing.id !== c.confirmedUserId) throw new DomainError('claim_confirm_required', 'The address became a user meanwhile; confirm again.');
  const userId = existing?.id ?? (await newUserOf(tdeps, d.email, d.contact_name ?? d.name));
  const displayName = d.company_name ?? d.name;
  let accountId: string;
  let connectionId: string | null = null;
  if (c.withConnection) {
    const r = await createConceptAccount(tdeps, {
      partnerId: d.partner_id,
      accessChannel: 'partner_claim',
      ownerUserId: userId,
      type: d.type,
      displayName,
      iban: c.iban,
      person: { full_name: d.contact_name ?? d.name, email: d.email },
      connection: {
        ean_code: c.ean!,
        street: c.street!,
        house_number: d.house_number!,
        house_number_addition: d.house_number_addition,
        postal_code: d.postal_code!,
        city: c.city!,
      },
    });
    accountId = r.account_id;
    connectionId = r.connection_id;
  } else {
    // no EAN or address yet: an account without a connection (createConceptAccount always makes one)
    const now = tdeps.clock();
    const a = await tdeps.db
      .insertInto('accounts')
      .values({
        partner_id: d.partner_id,
        owner_user_id: userId,
        access_channel: 'partner_claim',
        type: d.type,
        display_name: displayName,
        signatory_full_name: d.contact_name ?? d.name,
        signatory_email: d.email,
        iban_encrypted: c.iban ? tdeps.cipher.encrypt(c.iban) : null,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    accountId = a.id;
  }

  const now = tdeps.clock();
  if (d.charger_id) {
    // the coupled charger moves to the account just made (a fresh one: room for it): a charger the partner
    // registered sits on one of the partner's CPO accounts, and kept there it never made the customer's account
    // eligible nor counted its energy on the customer's connection
    await tdeps.db
      .updateTable('chargers')
      .set({ owner_user_id: userId, account_id: accountId, updated_at: now })
      .where('id', '=', d.charger_id)
      .where('owner_user_id', 'is', null)
      .execute();
  }
  await tdeps.db
    .updateTable('partner_drafts')
    .set({
      status: 'claimed',
      claimed_at: now,
      claimed_user_id: userId,
      claimed_account_id: accountId,
      claimed_connection_id: connectionId,
      ...(c.ean && !d.ean_code ? { ean_code: c.ean, ean_status: 'resolved' as const } : {}),
      // the address the customer gave on the claim page (issue 14 item 5)
      ...(c.withConnection ? { postal_code: d.postal_code, house_number: d.house_number, house_number_addition: d.house_number_addition, city: c.city } : {}),
    })
    .where('id', '=', d.id)
    .execute();
  return { userId, accountId, connectionId };
}

/**
 * A new user for the claimed address. One made by a concurrent claim or sign-up since the check above is not taken
 * over (it has not confirmed, D129): nothing is written, and the customer confirms again.
 */
async function newUserOf(tdeps: Deps, email: string, fullName: string): Promise<string> {
  const row = await tdeps.db
    .insertInto('users')
    .values({ email: email.trim(), full_name: fullName })
    .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!row) throw new DomainError('claim_confirm_required', 'The address became a user meanwhile; confirm again.');
  return row.id;
}
