// OCPP 2.0.1 StatusNotification: per EVSE (the EVSE id is the connector number of the domain); never an error.
import type { ActionAdapter } from '../adapter.ts';

const STATUSES = ['Available', 'Occupied', 'Reserved', 'Unavailable', 'Faulted'] as const;

export const statusNotification: ActionAdapter = {
  neverError: true,
  toEvent(params, r) {
    const p = r.obj(params, 'StatusNotification');
    return {
      kind: 'status',
      connectorId: r.connector(p.evseId, 'evseId'),
      status: r.enumOf(STATUSES, p.connectorStatus, 'connectorStatus'),
      errorCode: null,
      // D256: the time is not what the status says; a reset clock's is the message's arrival
      at: r.timeOrReceived(p.timestamp, 'timestamp'),
    };
  },
  respond: () => ({}),
};
