// Password rotation over OCPP (issue 10 item 8): the new password goes to the charger through the remote-command
// mechanism (C6.6: it reaches whichever process holds the socket) as 1.6 ChangeConfiguration AuthorizationKey or
// 2.0.1 SetVariables SecurityCtrlr.BasicAuthPassword. The old password stays valid until the charger connects
// with the new one (passwords.ts checkChargerPassword), so a charger that never applies it is never locked out.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { hashSecret } from '../../lib/secrets.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { sendCommand } from './commands.ts';
import { requireCharger } from './ocpp-charger.ts';
import { assertValidPassword, generateChargerPassword } from './passwords.ts';

/**
 * The OCPP 1.6 security whitepaper sends AuthorizationKey hex-encoded (the charger decodes it and uses the
 * result as its Basic-auth password); 'plain' is for chargers known to take the value as it is.
 */
export type AuthorizationKeyEncoding = 'hex' | 'plain';

export interface RotateInput {
  password?: string | undefined;
  authorization_key_encoding?: AuthorizationKeyEncoding | undefined;
}

export type RotateResult =
  | { ok: true; action: string; response: unknown; rotated: true; password: string }
  | { ok: true; action: string; response: unknown; rotated: false };

const REDACTED = '[redacted]';

function commandFor(protocol: string, password: string, encoding: AuthorizationKeyEncoding) {
  if (protocol === 'ocpp1.6') {
    const value = encoding === 'hex' ? Buffer.from(password, 'utf8').toString('hex') : password;
    return { action: 'ChangeConfiguration', payload: { key: 'AuthorizationKey', value } };
  }
  return {
    action: 'SetVariables',
    payload: { setVariableData: [{ component: { name: 'SecurityCtrlr' }, variable: { name: 'BasicAuthPassword' }, attributeValue: password }] },
  };
}

/** 'RebootRequired' is an accepted change too: the charger uses the new password from its next connection. */
function accepted(protocol: string, response: unknown): boolean {
  const r = response as { status?: unknown; setVariableResult?: Array<{ attributeStatus?: unknown }> } | null;
  const status = protocol === 'ocpp1.6' ? r?.status : r?.setVariableResult?.[0]?.attributeStatus;
  return status === 'Accepted' || status === 'RebootRequired';
}

export async function rotateChargerPassword(deps: Deps, chargerId: string, input: RotateInput = {}): Promise<RotateResult> {
  const password = input.password ?? generateChargerPassword();
  assertValidPassword(password);
  await requireCharger(deps, chargerId);
  const row = await deps.db
    .selectFrom('chargers')
    .leftJoin('ocpp_chargers', 'ocpp_chargers.charger_id', 'chargers.id')
    .select(['chargers.id', 'chargers.ocpp_identity', 'chargers.pending_password_hash', 'ocpp_chargers.protocol'])
    .where('chargers.id', '=', chargerId)
    .executeTakeFirstOrThrow();
  if (!row.ocpp_identity) throw new DomainError('charger_not_found', `Charger ${chargerId} is not an OCPP charger.`);
  if (!row.protocol) throw new DomainError('charger_offline', 'The charger has never connected.');
  const { action, payload } = commandFor(row.protocol, password, input.authorization_key_encoding ?? 'hex');

  // The hash is written before the call: a charger that applies the change while its answer is lost (timeout,
  // a crash of this process) can still connect with the new password.
  const hash = hashSecret(password);
  const previous = row.pending_password_hash;
  await deps.db.updateTable('chargers').set({ pending_password_hash: hash }).where('id', '=', row.id).execute();
  const restore = () =>
    deps.db.updateTable('chargers').set({ pending_password_hash: previous }).where('id', '=', row.id).where('pending_password_hash', '=', hash).execute();

  let result;
  try {
    result = await sendCommand(deps, row.id, action, payload, { setsPassword: true });
  } catch (err) {
    // timeout: the charger may have applied it, so the new hash stays pending beside the old password
    if (!(isDomainError(err) && err.code === 'charger_timeout')) await restore();
    throw err;
  } finally {
    await redactCommands(deps, row.id);
  }
  if (!accepted(row.protocol, result.response)) {
    await restore();
    return { ok: true, action, response: result.response, rotated: false };
  }
  return { ok: true, action, response: result.response, rotated: true, password };
}

/**
 * C0.6: a charger password is stored only as a hash, so the command rows that carried one keep it only while
 * in flight. Once the call is over (answered, failed or timed out) no process claims the row again.
 */
async function redactCommands(deps: Deps, chargerId: string): Promise<void> {
  await sql`
    update ocpp_commands set payload = jsonb_set(payload, '{value}', to_jsonb(${REDACTED}::text))
    where charger_id = ${chargerId} and action = 'ChangeConfiguration' and status <> 'pending'
      and payload->>'key' = 'AuthorizationKey' and payload->>'value' <> ${REDACTED}`.execute(deps.db);
  await sql`
    update ocpp_commands set payload = jsonb_set(payload, '{setVariableData}', (
      select jsonb_agg(case when e->'variable'->>'name' = 'BasicAuthPassword'
        then jsonb_set(e, '{attributeValue}', to_jsonb(${REDACTED}::text)) else e end)
      from jsonb_array_elements(payload->'setVariableData') e))
    where charger_id = ${chargerId} and action = 'SetVariables' and status <> 'pending'
      and jsonb_typeof(payload->'setVariableData') = 'array'
      and payload::text like '%BasicAuthPassword%' and payload::text not like ${'%' + REDACTED + '%'}`.execute(deps.db);
}
