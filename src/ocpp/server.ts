// OCPP WebSocket server on the service's port (C0.3, C4). Owned by the OCPP area; this placeholder
// attaches nothing until that area lands.
import type { Server } from 'node:http';
import type { Deps } from '../deps.ts';

export interface OcppServerHandle {
  close(): Promise<void>;
}

export async function attachOcpp(_server: Server, _deps: Deps): Promise<OcppServerHandle> {
  return { close: async () => {} };
}
