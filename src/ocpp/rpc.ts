// The one place ocpp-rpc's loose types are wrapped (ARCHITECTURE.md: a typed facade).
import { createRequire } from 'node:module';
import type * as SC from 'ocpp-rpc/lib/server-client.js';

export type RpcClient = SC.default;
export type Handshake = SC.IHandshakeInterface;

export interface IncomingCall {
  messageId: string;
  method: string;
  params: unknown;
}

interface ValidatorLike {
  subprotocol: string;
  validate(schemaId: string, params: unknown): boolean;
}

const require = createRequire(import.meta.url);
const standardValidators = require('ocpp-rpc/lib/standard-validators.js') as ValidatorLike[];

/**
 * ocpp-rpc's TimeoutError, taken through require: Node's CommonJS export detection does not see it, so
 * `import { TimeoutError } from 'ocpp-rpc'` fails to link under plain Node (it only works under tsx).
 */
export const TimeoutError = (require('ocpp-rpc') as { TimeoutError: new (...a: unknown[]) => Error }).TimeoutError;

/**
 * C4.1: everything the gateway sends is checked against ocpp-rpc's bundled official schemas.
 * Returns null when valid (or when the protocol has no schema for it), else the reason.
 */
export function validateOutbound(protocol: string, schemaId: string, payload: unknown): string | null {
  const v = standardValidators.find((x) => x.subprotocol === protocol);
  if (!v) return `no schemas for ${protocol}`;
  try {
    v.validate(schemaId, payload);
    return null;
  } catch (err) {
    const e = err as { rpcErrorCode?: string; message?: string };
    if (/is missing from subprotocol schema/.test(e.message ?? '')) return null;
    return e.message ?? 'schema violation';
  }
}
