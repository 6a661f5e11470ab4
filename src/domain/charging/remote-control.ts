// Issue 14 item 3: an owner starts and stops charging on their own charger, as the dashboard will. The call is a
// remote command (chargers/commands.ts, C6.6): a durable row delivered to whichever process holds the socket, so
// the answer is the same {ok, action, response} or 409 charger_offline / 504 charger_timeout / 502
// charger_call_error as the admin API's. 1.6 RemoteStartTransaction {connectorId, idTag}, 2.0.1
// RequestStartTransaction {evseId, idToken, remoteStartId}; the stop names the session's transaction id in the
// charger's protocol (1.6: the gateway's integer, 2.0.1: the charger's own string).
import crypto from 'node:crypto';
import type { Deps } from '../../deps.ts';
import { liveStateOf } from '../chargers/live-view.ts';
import { sendCommand, type CommandResult } from '../chargers/commands.ts';
import { ensureOcppCharger } from '../chargers/ocpp-charger.ts';
import { verdictOfRow } from '../chargers/id-tokens.ts';
import { DomainError } from '../errors.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * D35: the owner's id token, the same on every charger they own: "ERE" + 17 upper-case hex characters of
 * SHA-256("owner-id-token:" + user id). 20 characters, so it fits 1.6's idTag (CiString20) and 2.0.1's idToken
 * (CiString36, type Central). Like an RFID card number it names the owner; it is no secret and grants nothing by
 * itself: only the charger's id-token policy (C4.4) decides.
 */
export function ownerIdToken(userId: string): string {
  return 'ERE' + crypto.createHash('sha256').update(`owner-id-token:${userId}`).digest('hex').slice(0, 17).toUpperCase();
}

/** A charger the user owns (directly or through an account they own), as GET /chargers lists them. */
async function ownedCharger(deps: Deps, userId: string, chargerId: string): Promise<void> {
  const row = UUID.test(chargerId)
    ? await deps.db
        .selectFrom('chargers')
        .select('chargers.id')
        .where('chargers.id', '=', chargerId)
        .where('chargers.status', '=', 'active')
        .where((eb) =>
          eb.or([
            eb('chargers.owner_user_id', '=', userId),
            eb('chargers.account_id', 'in', eb.selectFrom('accounts').select('accounts.id').where('accounts.owner_user_id', '=', userId)),
          ]),
        )
        .executeTakeFirst()
    : undefined;
  // another user's charger is not found either (no existence leak, as GET /sessions)
  if (!row) throw new DomainError('charger_not_found', `No charger ${chargerId}.`);
}

/**
 * D35: under the `list` policy the owner's token is registered on their charger as Accepted when they start
 * (an operator's own entry for it wins: listed Blocked, Expired or Invalid, the start is refused before any call).
 * Under `accept_all` every token is Accepted already. Either way the charger's Authorize / StartTransaction /
 * TransactionEvent for the started session is answered Accepted, and the session carries the owner's id tag.
 */
async function admitOwnerToken(deps: Deps, chargerId: string, idToken: string): Promise<void> {
  await ensureOcppCharger(deps.db, chargerId);
  const policy = await deps.db.selectFrom('ocpp_chargers').select('auth_policy').where('charger_id', '=', chargerId).executeTakeFirstOrThrow();
  if (policy.auth_policy !== 'list') return;
  await deps.db
    .insertInto('ocpp_id_tokens')
    .values({ charger_id: chargerId, id_token: idToken, status: 'Accepted', expires_at: null })
    .onConflict((oc) => oc.columns(['charger_id', 'id_token']).doNothing())
    .execute();
  const row = await deps.db.selectFrom('ocpp_id_tokens').select(['status', 'expires_at']).where('charger_id', '=', chargerId).where('id_token', '=', idToken).executeTakeFirst();
  const { verdict } = verdictOfRow({ auth_policy: 'list', status: row?.status ?? null, expires_at: row?.expires_at ?? null }, deps.clock());
  if (verdict !== 'Accepted') throw new DomainError('id_token_refused', `The owner's id token ${idToken} is ${verdict} on this charger.`);
}

export interface StartResult extends CommandResult {
  /** the id token the charger was asked to start with (the session's id_tag) */
  id_token: string;
}

/** Start charging on a connector (1.6) / EVSE (2.0.1) of the owner's own charger, with the owner's id token. */
export async function startCharging(deps: Deps, input: { userId: string; chargerId: string; connectorId: number }): Promise<StartResult> {
  if (!Number.isInteger(input.connectorId) || input.connectorId < 1) throw new DomainError('invalid_request', 'connector_id: an integer from 1');
  await ownedCharger(deps, input.userId, input.chargerId);
  const idToken = ownerIdToken(input.userId);
  const st = await liveStateOf(deps, input.chargerId);
  if (!st?.protocol) throw new DomainError('charger_offline', 'The charger has no open connection.');
  await admitOwnerToken(deps, input.chargerId, idToken);
  const r =
    st.protocol === 'ocpp1.6'
      ? await sendCommand(deps, input.chargerId, 'RemoteStartTransaction', { connectorId: input.connectorId, idTag: idToken })
      : await sendCommand(deps, input.chargerId, 'RequestStartTransaction', {
          evseId: input.connectorId,
          idToken: { idToken, type: 'Central' },
          // 2.0.1 asks for an id the charger echoes in the started TransactionEvent; nothing here depends on it
          remoteStartId: crypto.randomInt(1, 2 ** 31 - 1),
        });
  return { ...r, id_token: idToken };
}

/** Stop a running session on the owner's own charger: its transaction id in the charger's protocol. */
export async function stopCharging(deps: Deps, input: { userId: string; sessionId: string }): Promise<CommandResult> {
  const s = UUID.test(input.sessionId)
    ? await deps.db
        .selectFrom('charging_sessions')
        .select(['charging_sessions.charger_id', 'charging_sessions.transaction_id', 'charging_sessions.status'])
        .where('charging_sessions.id', '=', input.sessionId)
        .executeTakeFirst()
    : undefined;
  if (!s) throw new DomainError('session_not_found', `No session ${input.sessionId}.`);
  try {
    await ownedCharger(deps, input.userId, s.charger_id);
  } catch {
    throw new DomainError('session_not_found', `No session ${input.sessionId}.`);
  }
  if (s.status !== 'active') throw new DomainError('session_not_active', `Session ${input.sessionId} has ended.`);
  const st = await liveStateOf(deps, s.charger_id);
  if (!st?.protocol) throw new DomainError('charger_offline', 'The charger has no open connection.');
  if (st.protocol === 'ocpp1.6') {
    const txId = Number(s.transaction_id);
    // C4.6: a 1.6 session has the gateway's integer id; one placed from an offline start may not
    if (!Number.isSafeInteger(txId)) throw new DomainError('session_not_active', `Session ${input.sessionId} has no transaction id the charger knows.`);
    return sendCommand(deps, s.charger_id, 'RemoteStopTransaction', { transactionId: txId });
  }
  return sendCommand(deps, s.charger_id, 'RequestStopTransaction', { transactionId: s.transaction_id });
}
