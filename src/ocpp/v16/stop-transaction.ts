// OCPP 1.6 StopTransaction: closes the session its id names; an unknown or -1 id is matched by time (C4.6).
import type { ActionAdapter } from '../adapter.ts';
import { isRoundingOf } from '../../domain/charging/readings.ts';
import { readMeterValues } from '../sampled-values.ts';

export const stopTransaction: ActionAdapter = {
  transactional: true,
  toEvent(params, r) {
    const p = r.obj(params, 'StopTransaction');
    const id = r.int(p.transactionId, 'transactionId');
    const meterStopWh = r.registerWh(p.meterStop, 'meterStop');
    // C4.11: an unreadable transactionData value is set aside; signed data alone goes to the stop reading (C4.5)
    const data = readMeterValues(r, 'ocpp1.6', p.transactionData, 'Transaction.End');
    const endedAt = r.time(p.timestamp, 'timestamp');
    // the stop's register in transactionData written coarser than meterStop (kWh with two decimals beside Wh) is
    // meterStop itself: stored, it made a step of a few Wh in no time, held as implausible (D96)
    const readings = data.readings.filter((x) => {
      const rounded = meterStopWh !== null && x.phase === '' && x.measuredAt.getTime() === endedAt.getTime() && isRoundingOf(x.wh, meterStopWh);
      if (rounded) r.quirk('rounded_register');
      return !rounded;
    });
    return {
      kind: 'transaction_ended',
      ref: id === null || id <= 0 ? { kind: 'unknown', sent: String(id) } : { kind: 'gateway', transactionId: String(id) },
      connectorId: null,
      idTag: r.str(p.idTag, 'idTag'),
      endedAt,
      meterStopWh,
      reason: r.str(p.reason, 'reason'),
      readings,
      signed: data.signed,
    };
  },
  respond(o) {
    const verdict = o.kind === 'transaction' ? o.verdict : null;
    return verdict ? { idTagInfo: { status: verdict } } : {};
  },
  unusableAck: async () => ({}),
};
