// OCPP 2.0.1 TransactionEvent Started/Updated/Ended, keyed by the charger's transactionId (C4.6). seqNo gaps
// and offline events are tolerated; seqNo restarts per transaction, so nothing is deduplicated on it.
import { idTagVerdict } from '../../domain/chargers/id-tokens.ts';
import type { ChargerEvent } from '../../domain/charging/events.ts';
import type { Deps } from '../../deps.ts';
import { type ActionAdapter, isEmptyIdToken, isNoAuthorization } from '../adapter.ts';
import { readMeterValues } from '../sampled-values.ts';
import { Unusable } from '../tolerant.ts';

export const transactionEvent: ActionAdapter = {
  transactional: true,
  toEvent(params, r): ChargerEvent {
    const p = r.obj(params, 'TransactionEvent');
    const eventType = r.enumOf(['Started', 'Updated', 'Ended'] as const, p.eventType, 'eventType');
    const at = r.time(p.timestamp, 'timestamp');
    const info = r.obj(p.transactionInfo, 'transactionInfo');
    const transactionId = r.str(info.transactionId, 'transactionInfo.transactionId', true);
    if (!transactionId) throw new Unusable('transactionInfo.transactionId is empty');
    const evse = p.evse === undefined ? null : r.obj(p.evse, 'evse');
    const evseId = evse ? r.connector(evse.id, 'evse.id') : null;
    // D183: a NoAuthorization token names nobody: no id tag (its answer is Accepted, respond)
    const idToken = p.idToken === undefined || isNoAuthorization(p.idToken) ? null : r.str(r.obj(p.idToken, 'idToken').idToken, 'idToken.idToken');
    const { readings, signed } = readMeterValues(r, 'ocpp2.0.1', p.meterValue);
    if (eventType === 'Started') {
      if (evseId === null) r.quirk('missing_evse');
      return {
        kind: 'transaction_started',
        chargerTransactionId: transactionId,
        connectorId: evseId ?? 1,
        idTag: idToken,
        startedAt: at,
        meterStartWh: null,
        readings,
        signed,
        offline: p.offline === true,
      };
    }
    if (eventType === 'Updated') {
      return { kind: 'transaction_updated', chargerTransactionId: transactionId, connectorId: evseId ?? 1, idTag: idToken, at, readings, signed };
    }
    return {
      kind: 'transaction_ended',
      ref: { kind: 'charger', transactionId },
      connectorId: evseId,
      idTag: idToken,
      endedAt: at,
      meterStopWh: null,
      reason: r.str(info.stoppedReason, 'stoppedReason'),
      readings,
      signed,
    };
  },
  respond(o, params) {
    const idToken = params !== null && typeof params === 'object' ? (params as Record<string, unknown>).idToken : undefined;
    // D213: a token of a type with an identifier but none in it is Invalid (it was read as no token: no verdict)
    if (isEmptyIdToken(idToken)) return { idTokenInfo: { status: 'Invalid' } };
    const verdict = o.kind === 'transaction' || o.kind === 'transaction_started' ? o.verdict : null;
    if (verdict) return { idTokenInfo: { status: verdict } };
    // D183: 2.0.1 answers idTokenInfo whenever the request carried an idToken; a NoAuthorization one is Accepted
    return isNoAuthorization(idToken) ? { idTokenInfo: { status: 'Accepted' } } : {};
  },
  async unusableAck(deps: Deps, chargerId: string, params: unknown) {
    // D255: an unusable TransactionEvent (quarantined) that carried an idToken still gets the verdict on it that a
    // usable one gets (C4.4; 2.0.1 requires idTokenInfo whenever the request carried an idToken): a data problem is
    // no reason to tell the charger the token is refused
    const idToken = params !== null && typeof params === 'object' ? (params as Record<string, unknown>).idToken : undefined;
    if (idToken === undefined) return {};
    if (isNoAuthorization(idToken)) return { idTokenInfo: { status: 'Accepted' } };
    const raw = idToken !== null && typeof idToken === 'object' ? (idToken as Record<string, unknown>).idToken : undefined;
    const id = typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : raw;
    // D213: a token with no identifier in it names nobody; one that cannot be read (not a string, a NUL) likewise
    if (isEmptyIdToken(idToken) || typeof id !== 'string' || id.includes('\u0000')) return { idTokenInfo: { status: 'Invalid' } };
    return { idTokenInfo: { status: (await idTagVerdict(deps, chargerId, id)).verdict } };
  },
};
