// OCPP 2.0.1 BootNotification (C4.3).
import { type ActionAdapter, expect, utc } from '../adapter.ts';

export const bootNotification: ActionAdapter = {
  toEvent(params, r) {
    const p = r.obj(params, 'BootNotification');
    const cs = r.obj(p.chargingStation, 'chargingStation');
    return {
      kind: 'boot',
      vendor: r.str(cs.vendorName, 'vendorName', true),
      model: r.str(cs.model, 'model', true),
      serial: r.str(cs.serialNumber, 'serialNumber'),
      firmware: r.str(cs.firmwareVersion, 'firmwareVersion'),
      reason: r.str(p.reason, 'reason'),
    };
  },
  respond(o) {
    const b = expect(o, 'boot');
    return { status: b.status, currentTime: utc(b.currentTime), interval: b.intervalSeconds };
  },
};
