// The 10-charger rule (spec §4.1 rule 5, D27): an account holds at most 10 active chargers, whichever route
// adds the charger (CPO POST /v1/chargers, Personal POST /chargers, the operator's POST /admin/users/:id/chargers).
// Every route that puts a charger on an account calls this inside the transaction that inserts it.
import type { Db } from '../../db/database.ts';
import { DomainError } from '../errors.ts';

export const MAX_ACTIVE_CHARGERS = 10;

/**
 * Locks the account row (FOR UPDATE, held until the caller's transaction ends) and refuses a further charger when
 * the account already has MAX_ACTIVE_CHARGERS active ones. Concurrent registrations on one account queue on that
 * lock, so each counts the chargers committed before it: the limit holds under any interleaving. The caller checks
 * that the account exists and is the caller's before.
 */
export async function assertRoomForCharger(trx: Db, accountId: string): Promise<void> {
  await trx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().execute();
  const { n } = await trx
    .selectFrom('chargers')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('account_id', '=', accountId)
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  if (Number(n) >= MAX_ACTIVE_CHARGERS) {
    throw new DomainError('charger_limit', `An account holds at most ${MAX_ACTIVE_CHARGERS} active chargers.`);
  }
}
