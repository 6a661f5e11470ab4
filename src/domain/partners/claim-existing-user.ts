// D129: a claim for an e-mail address that already belongs to a user links that user's account only when the owner of
// the address confirms it. Whoever holds a claim link (the partner itself, when it did not have us send the invite)
// could otherwise put an account, an IBAN and a machtiging of its choosing under someone else's login. The confirmation
// is a link e-mailed to that address: the claim page again, carrying a code that names the draft and the user
// (a MAC under the service's key, so nothing is stored), which the confirming form sends back.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { newUnsubscribeToken, queueMessages } from '../invites/outbox.ts';
import { operatorOf } from '../../lib/operator.ts';
import type { Locale } from '../mandates/index.ts';

/** At most one confirmation e-mail per draft in this many minutes (a claim page posted again sends no more). */
const CONFIRM_MAIL_MINUTES = 10;

/** what the code of a draft for a user is a MAC of */
const codeData = (draftId: string, userId: string) => `claim-link:${draftId}:${userId}`;
const code = (deps: Deps, draftId: string, userId: string) => deps.cipher.mac(codeData(draftId, userId));

/** The user whose e-mail address the draft names, if there is one. */
export async function userOfDraftEmail(deps: Deps, emailLower: string): Promise<{ id: string } | undefined> {
  return deps.db.selectFrom('users').select('id').where(sql<string>`lower(email)`, '=', emailLower).executeTakeFirst();
}

/**
 * Whether `given` is the confirmation code of this draft for this user. D251: under any configured data key, so a
 * link e-mailed before a key rotation confirms while the old key is still configured as a previous one.
 */
export function confirmsExistingUser(deps: Deps, draftId: string, userId: string, given: string | undefined): boolean {
  return typeof given === 'string' && given.length > 0 && given.length <= 100 && deps.cipher.verifyMac(codeData(draftId, userId), given);
}

const MAIL = {
  nl: {
    subject: (partner: string) => `Bevestig de aanmelding door ${partner}`,
    body: (partner: string, url: string) =>
      `${partner} heeft u aangemeld. Er bestaat al een account met dit e-mailadres; de aanmelding wordt pas aan uw account toegevoegd als u die bevestigt:\n\n${url}\n\nHeeft u dit niet verwacht? Dan hoeft u niets te doen: zonder uw bevestiging verandert er niets.`,
  },
  en: {
    subject: (partner: string) => `Confirm the registration by ${partner}`,
    body: (partner: string, url: string) =>
      `${partner} has registered you. An account with this e-mail address already exists; the registration is added to it only once you confirm it:\n\n${url}\n\nDid you not expect this? Then there is nothing to do: without your confirmation nothing changes.`,
  },
};

/**
 * E-mails the confirmation link of this claim to the draft's address (the existing user's), unless one went out in the
 * last CONFIRM_MAIL_MINUTES.
 */
export async function askExistingUserToConfirm(
  deps: Deps,
  d: { id: string; email: string; partner_name: string },
  userId: string,
  claimToken: string,
  lc: Locale,
): Promise<void> {
  const now = deps.clock();
  const recent = await deps.db
    .selectFrom('outbox_messages')
    .select('id')
    .where('draft_id', '=', d.id)
    .where('kind', '=', 'claim_link_confirm')
    .where('created_at', '>', new Date(now.getTime() - CONFIRM_MAIL_MINUTES * 60_000))
    .executeTakeFirst();
  if (recent) return;
  const url = `${deps.config.PUBLIC_BASE_URL}/claim/${encodeURIComponent(claimToken)}?locale=${lc}&confirm=${code(deps, d.id, userId)}`;
  const t = MAIL[lc];
  await queueMessages(
    deps.db,
    now,
    [{ to: d.email, subject: t.subject(d.partner_name), body: t.body(d.partner_name, url), kind: 'claim_link_confirm', draftId: d.id, unsubscribeToken: newUnsubscribeToken() }],
    operatorOf(deps.config),
  );
}
