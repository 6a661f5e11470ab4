// OCPP 1.6J actions the gateway answers (C4.4); anything else gets CALLERROR NotSupported.
import { type ActionAdapter, expect, notification, utc } from '../adapter.ts';
import { authorize } from './authorize.ts';
import { bootNotification } from './boot-notification.ts';
import { meterValues } from './meter-values.ts';
import { startTransaction } from './start-transaction.ts';
import { statusNotification } from './status-notification.ts';
import { stopTransaction } from './stop-transaction.ts';

const heartbeat: ActionAdapter = {
  toEvent: () => ({ kind: 'heartbeat' }),
  respond: (o) => ({ currentTime: utc(expect(o, 'heartbeat').currentTime) }),
};

export const v16Actions: Record<string, ActionAdapter> = {
  BootNotification: bootNotification,
  Heartbeat: heartbeat,
  StatusNotification: statusNotification,
  Authorize: authorize,
  StartTransaction: startTransaction,
  StopTransaction: stopTransaction,
  MeterValues: meterValues,
  FirmwareStatusNotification: notification('FirmwareStatusNotification'),
  DiagnosticsStatusNotification: notification('DiagnosticsStatusNotification'),
  SecurityEventNotification: notification('SecurityEventNotification'),
  // D139: the 1.6 security extension's other notifications (C4.4 names LogStatusNotification beside Diagnostics)
  LogStatusNotification: notification('LogStatusNotification'),
  SignedFirmwareStatusNotification: notification('SignedFirmwareStatusNotification'),
};

/** Commands an operator can send to a 1.6 charger (C6.6). */
export const v16Commands = ['Reset', 'TriggerMessage', 'ChangeConfiguration', 'GetConfiguration', 'RemoteStartTransaction', 'RemoteStopTransaction'] as const;
