// D115: an owner gives the IBAN an account of theirs lacks (a partner's draft claimed before the claim page asked for
// it, or a CPO account created without one): on the dashboard, signed in. Only an account with no IBAN takes one
// here; changing an IBAN that is stored stays with the CPO's re-post and the operator (a signed-in session is not
// enough to move where the money goes). Stored encrypted, never shown again.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { DomainError } from '../errors.ts';
import { normaliseIban } from './validate.ts';

export interface AccountWithoutIban {
  id: string;
  display_name: string | null;
}

/** The accounts the user owns that have no IBAN yet. */
export async function accountsWithoutIban(deps: Pick<Deps, 'db'>, userId: string): Promise<AccountWithoutIban[]> {
  return deps.db
    .selectFrom('accounts')
    .select(['id', 'display_name'])
    .where('owner_user_id', '=', userId)
    .where('iban_encrypted', 'is', null)
    .orderBy('created_at')
    .execute();
}

/** Stores the IBAN on an account of the user's that has none: 400 invalid_iban, 404 account_not_found, 409 iban_already_stored. */
export async function setMissingIban(deps: Pick<Deps, 'db' | 'cipher' | 'clock'>, userId: string, accountId: string, raw: string | undefined): Promise<void> {
  const iban = normaliseIban(raw);
  if (iban === null) throw new DomainError('invalid_iban', 'Enter the IBAN.');
  const r = await deps.db
    .updateTable('accounts')
    .set({ iban_encrypted: deps.cipher.encrypt(iban), updated_at: deps.clock() })
    .where('id', '=', accountId)
    .where('owner_user_id', '=', userId)
    .where('iban_encrypted', 'is', null)
    .executeTakeFirst();
  if (Number(r.numUpdatedRows) === 1) return;
  const mine = await deps.db.selectFrom('accounts').select(sql<boolean>`iban_encrypted is not null`.as('has')).where('id', '=', accountId).where('owner_user_id', '=', userId).executeTakeFirst();
  throw mine ? new DomainError('iban_already_stored', 'This account has an IBAN already.') : new DomainError('account_not_found', 'No such account of yours.');
}
