// OCPP 2.0.1 actions the gateway answers (C4.4); anything else gets CALLERROR NotImplemented.
import { type ActionAdapter, expect, notification, utc } from '../adapter.ts';
import { authorize } from './authorize.ts';
import { bootNotification } from './boot-notification.ts';
import { meterValues } from './meter-values.ts';
import { statusNotification } from './status-notification.ts';
import { transactionEvent } from './transaction-event.ts';

const heartbeat: ActionAdapter = {
  toEvent: () => ({ kind: 'heartbeat' }),
  respond: (o) => ({ currentTime: utc(expect(o, 'heartbeat').currentTime) }),
};

export const v201Actions: Record<string, ActionAdapter> = {
  BootNotification: bootNotification,
  Heartbeat: heartbeat,
  StatusNotification: statusNotification,
  Authorize: authorize,
  TransactionEvent: transactionEvent,
  MeterValues: meterValues,
  FirmwareStatusNotification: notification('FirmwareStatusNotification'),
  LogStatusNotification: notification('LogStatusNotification'),
  SecurityEventNotification: notification('SecurityEventNotification'),
  NotifyEvent: notification('NotifyEvent'),
  NotifyReport: notification('NotifyReport'),
};

/** Commands an operator can send to a 2.0.1 charger (C6.6). */
export const v201Commands = ['Reset', 'TriggerMessage', 'SetVariables', 'GetVariables', 'RequestStartTransaction', 'RequestStopTransaction'] as const;
