// OCPP 1.6 StatusNotification: per connector; never answered with an error (C4.4).
import type { ActionAdapter } from '../adapter.ts';

const STATUSES = ['Available', 'Preparing', 'Charging', 'SuspendedEVSE', 'SuspendedEV', 'Finishing', 'Reserved', 'Unavailable', 'Faulted'] as const;

export const statusNotification: ActionAdapter = {
  neverError: true,
  toEvent(params, r) {
    const p = r.obj(params, 'StatusNotification');
    return {
      kind: 'status',
      connectorId: r.connector(p.connectorId, 'connectorId'),
      status: r.enumOf(STATUSES, p.status, 'status'),
      errorCode: r.str(p.errorCode, 'errorCode'),
      // D256: the time is not what the status says; a reset clock's (or none) is the message's arrival
      at: r.timeOrReceived(p.timestamp, 'timestamp'),
    };
  },
  respond: () => ({}),
};
