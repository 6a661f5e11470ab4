// OCPP 2.0.1 MeterValues: outside a TransactionEvent, attached by EVSE and time; EVSE 0 is station-level.
import type { ActionAdapter } from '../adapter.ts';
import { asideReasons, nothingUsable, readMeterValues } from '../sampled-values.ts';
import { Unusable } from '../tolerant.ts';

export const meterValues: ActionAdapter = {
  transactional: true,
  toEvent(params, r) {
    const p = r.obj(params, 'MeterValues');
    const connectorId = r.connector(p.evseId, 'evseId');
    const read = readMeterValues(r, 'ocpp2.0.1', p.meterValue);
    if (nothingUsable(r, read)) throw new Unusable(asideReasons(r));
    return { kind: 'meter_values', connectorId, ref: null, readings: read.readings, signed: read.signed };
  },
  respond: () => ({}),
  unusableAck: async () => ({}),
};
