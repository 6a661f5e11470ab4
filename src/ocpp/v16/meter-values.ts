// OCPP 1.6 MeterValues: a missing or zero transactionId is attached by connector and time (C4.6).
import type { ActionAdapter } from '../adapter.ts';
import { readMeterValues } from '../sampled-values.ts';

export const meterValues: ActionAdapter = {
  transactional: true,
  toEvent(params, r) {
    const p = r.obj(params, 'MeterValues');
    const tx = r.int(p.transactionId, 'transactionId');
    return {
      kind: 'meter_values',
      connectorId: r.int(p.connectorId, 'connectorId', true),
      ref: tx === null || tx <= 0 ? null : { kind: 'gateway', transactionId: String(tx) },
      readings: readMeterValues(r, 'ocpp1.6', p.meterValue),
    };
  },
  respond: () => ({}),
  unusableAck: async () => ({}),
};
