// OCPP 1.6 StartTransaction: the gateway assigns a service-wide unique integer transactionId, the same on a
// replay (C4.6); an unknown or invalid id tag still gets one (C4.4).
import { allocateTransactionId } from '../../domain/charging/sessions.ts';
import { type ActionAdapter, expect } from '../adapter.ts';

export const startTransaction: ActionAdapter = {
  transactional: true,
  toEvent(params, r) {
    const p = r.obj(params, 'StartTransaction');
    const meterStartWh = r.registerWh(p.meterStart, 'meterStart');
    return {
      kind: 'transaction_started',
      chargerTransactionId: null,
      connectorId: r.connector(p.connectorId, 'connectorId'),
      // an empty idTag (a charger started without a card) is the tag "", answered by the charger's policy like any
      // other (accept_all: Accepted); read as absent, it was answered Invalid and such a charger stops charging
      idTag: typeof p.idTag === 'string' ? r.str(p.idTag, 'idTag', true) : r.str(p.idTag, 'idTag'),
      startedAt: r.time(p.timestamp, 'timestamp'),
      meterStartWh,
      readings: [],
      offline: false,
    };
  },
  respond(o) {
    const s = expect(o, 'transaction_started');
    return { transactionId: Number(s.transactionId), idTagInfo: { status: s.verdict ?? 'Invalid' } };
  },
  async unusableAck(deps) {
    // acknowledged so the charger does not retry and drop it; the id is fresh and the message is quarantined
    return { transactionId: Number(await allocateTransactionId(deps.db)), idTagInfo: { status: 'Invalid' } };
  },
};
