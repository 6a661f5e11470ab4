// OCPP 1.6 MeterValues: a missing or zero transactionId is attached by connector and time (C4.6).
import type { ActionAdapter } from '../adapter.ts';
import { asideReasons, nothingUsable, readMeterValues } from '../sampled-values.ts';
import { Unusable } from '../tolerant.ts';

export const meterValues: ActionAdapter = {
  transactional: true,
  toEvent(params, r) {
    const p = r.obj(params, 'MeterValues');
    const tx = r.int(p.transactionId, 'transactionId');
    const connectorId = r.connector(p.connectorId, 'connectorId');
    const read = readMeterValues(r, 'ocpp1.6', p.meterValue);
    if (nothingUsable(r, read)) throw new Unusable(asideReasons(r));
    return {
      kind: 'meter_values',
      connectorId,
      ref: tx === null || tx <= 0 ? null : { kind: 'gateway', transactionId: String(tx) },
      readings: read.readings,
      signed: read.signed,
    };
  },
  respond: () => ({}),
  unusableAck: async () => ({}),
};
