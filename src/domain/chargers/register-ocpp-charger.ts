// C4.9 registration of an OCPP charger: Personal POST /chargers, the sandbox seed and the simulator use this.
// A charger put on an account counts toward that account's 10 active chargers (charger-limit.ts).
// The password is shown once and stored only as hashSecret(password) (C0.6).
import crypto from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { hashSecret } from '../../lib/secrets.ts';
import { DomainError } from '../errors.ts';
import { assertRoomForCharger } from './charger-limit.ts';
import { ensureOcppCharger } from './ocpp-charger.ts';
import { generateChargerPassword } from './passwords.ts';

export const OCPP_IDENTITY = /^[A-Za-z0-9_.-]{1,64}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface RegisteredOcppCharger {
  charger_id: string;
  identity: string;
  password: string;
  /** the OCPP-J central system URL; the charger appends its identity: <endpoint>/<identity> */
  endpoint: string;
}

export function ocppEndpoint(deps: Deps): string {
  return deps.config.PUBLIC_BASE_URL.replace(/^http/, 'ws') + '/ocpp';
}

export async function registerOcppCharger(
  deps: Deps,
  input: { ownerUserId: string; nickname: string; identity?: string | undefined; accountId?: string | null | undefined },
): Promise<RegisteredOcppCharger> {
  const nickname = input.nickname.trim();
  if (nickname.length < 1 || nickname.length > 100) throw new DomainError('invalid_request', 'nickname: must be 1 to 100 characters');
  const identity = input.identity ?? `ERE-${crypto.randomBytes(5).toString('hex').toUpperCase()}`;
  if (!OCPP_IDENTITY.test(identity)) throw new DomainError('invalid_request', 'ocpp_identity: must match ^[A-Za-z0-9_.-]{1,64}$');
  const accountId = input.accountId ?? null;
  if (accountId !== null && !UUID.test(accountId)) throw new DomainError('account_not_found', `No account ${accountId} of yours.`);
  const password = generateChargerPassword();
  const row = await deps.db.transaction().execute(async (trx) => {
    if (accountId !== null) {
      const acc = await trx.selectFrom('accounts').select('id').where('id', '=', accountId).where('owner_user_id', '=', input.ownerUserId).executeTakeFirst();
      if (!acc) throw new DomainError('account_not_found', `No account ${accountId} of yours.`);
      // spec §4.1 rule 5 on this route too: at most 10 active chargers per account, under the account's row lock
      await assertRoomForCharger(trx, accountId);
    }
    const r = await trx
      .insertInto('chargers')
      .values({
        owner_user_id: input.ownerUserId,
        account_id: accountId,
        nickname,
        connection_type: 'ocpp',
        ocpp_identity: identity,
        password_hash: hashSecret(password),
      })
      .onConflict((oc) => oc.column('ocpp_identity').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!r) throw new DomainError('ocpp_identity_taken', `The OCPP identity ${identity} is already registered.`);
    await ensureOcppCharger(trx, r.id);
    return r;
  });
  return { charger_id: row.id, identity, password, endpoint: ocppEndpoint(deps) };
}
