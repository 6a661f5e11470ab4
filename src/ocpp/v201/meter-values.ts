// OCPP 2.0.1 MeterValues: outside a TransactionEvent, attached by EVSE and time; EVSE 0 is station-level.
import type { ActionAdapter } from '../adapter.ts';
import { readMeterValues } from '../sampled-values.ts';

export const meterValues: ActionAdapter = {
  transactional: true,
  toEvent(params, r) {
    const p = r.obj(params, 'MeterValues');
    return {
      kind: 'meter_values',
      connectorId: r.int(p.evseId, 'evseId', true),
      ref: null,
      readings: readMeterValues(r, 'ocpp2.0.1', p.meterValue),
    };
  },
  respond: () => ({}),
  unusableAck: async () => ({}),
};
