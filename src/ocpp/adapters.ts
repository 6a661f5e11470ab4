// The action adapters of each protocol version, by action name (C4.4).
import type { ActionAdapter } from './adapter.ts';
import { v16Actions } from './v16/index.ts';
import { v201Actions } from './v201/index.ts';

export type OcppProtocol = 'ocpp1.6' | 'ocpp2.0.1';

export function adaptersOf(protocol: string): Record<string, ActionAdapter> {
  return protocol === 'ocpp1.6' ? v16Actions : v201Actions;
}
