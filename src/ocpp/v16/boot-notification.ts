// OCPP 1.6 BootNotification (C4.3).
import { type ActionAdapter, expect, utc } from '../adapter.ts';

export const bootNotification: ActionAdapter = {
  toEvent(params, r) {
    const p = r.obj(params, 'BootNotification');
    return {
      kind: 'boot',
      vendor: r.str(p.chargePointVendor, 'chargePointVendor', true),
      model: r.str(p.chargePointModel, 'chargePointModel', true),
      serial: r.str(p.chargePointSerialNumber, 'chargePointSerialNumber') ?? r.str(p.chargeBoxSerialNumber, 'chargeBoxSerialNumber'),
      firmware: r.str(p.firmwareVersion, 'firmwareVersion'),
      reason: null,
    };
  },
  respond(o) {
    const b = expect(o, 'boot');
    return { status: b.status, currentTime: utc(b.currentTime), interval: b.intervalSeconds };
  },
};
