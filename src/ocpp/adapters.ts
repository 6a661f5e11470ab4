// The action adapters of each protocol version, by action name (C4.4).
import type { ActionAdapter } from './adapter.ts';
import { v16Actions } from './v16/index.ts';
import { v201Actions } from './v201/index.ts';

export type OcppProtocol = 'ocpp1.6' | 'ocpp2.0.1';

/**
 * The adapter for an action name a charger sent, or undefined. Only the table's own entries count: a name like
 * `constructor` or `__proto__` must not resolve to something inherited from Object.prototype.
 */
export function adapterFor(protocol: string, action: string): ActionAdapter | undefined {
  const table = protocol === 'ocpp1.6' ? v16Actions : v201Actions;
  return Object.hasOwn(table, action) ? table[action] : undefined;
}

/** The metrics' action label: a handled action's name, else `other` (a charger's made-up names add no series, D130). */
export function actionLabel(protocol: string, action: string): string {
  return action === 'DataTransfer' || adapterFor(protocol, action) ? action : 'other';
}
