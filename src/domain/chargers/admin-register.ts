// POST /admin/users/:user_id/chargers (issue 10 item 8): an operator registers an OCPP charger for a user, as the
// user would with Personal POST /chargers (C4.9), optionally with the password the charger already has (a fleet
// imported with its passwords). A generated password is shown once; one the operator brought is never echoed.
import type { Deps } from '../../deps.ts';
import { DomainError } from '../errors.ts';
import { assertValidPassword, setChargerPassword } from './passwords.ts';
import { registerOcppCharger } from './register-ocpp-charger.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface AdminRegisterInput {
  nickname: string;
  ocpp_identity?: string | undefined;
  account_id?: string | null | undefined;
  password?: string | undefined;
}

export interface AdminRegistered {
  charger_id: string;
  identity: string;
  endpoint: string;
  /** only when the gateway generated it */
  password?: string;
}

export async function registerChargerAsOperator(deps: Deps, userId: string, input: AdminRegisterInput): Promise<AdminRegistered> {
  if (input.password !== undefined) assertValidPassword(input.password);
  const user = UUID.test(userId) ? await deps.db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst() : undefined;
  if (!user) throw new DomainError('user_not_found', `No user ${userId}.`);
  const r = await registerOcppCharger(deps, {
    ownerUserId: user.id,
    nickname: input.nickname,
    identity: input.ocpp_identity,
    accountId: input.account_id ?? null,
  });
  // Two steps: should the second fail, the charger exists with a generated password nobody saw, and
  // PUT /admin/chargers/:charger_id/password sets the operator's one.
  if (input.password === undefined) return { charger_id: r.charger_id, identity: r.identity, endpoint: r.endpoint, password: r.password };
  await setChargerPassword(deps, r.charger_id, input.password);
  return { charger_id: r.charger_id, identity: r.identity, endpoint: r.endpoint };
}
