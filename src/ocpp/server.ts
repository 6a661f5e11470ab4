// OCPP WebSocket server on the service's port (C0.3, C4.1, C4.2): ocpp-rpc on fastify's 'upgrade' event.
// Upgrade: path /ocpp/<identity> (trailing slash tolerated) → Basic auth against the hashed charger password
// (401 otherwise) → subprotocol (2.0.1 preferred, none → OCPP_DEFAULT_PROTOCOL, only unknown ones → refused).
// Inbound messages are read tolerantly by our own adapters (strictMode off); what we send is schema-checked.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { RPCServer } from 'ocpp-rpc';
import type { Deps } from '../deps.ts';
import { hashSecret, timingSafeEqualStr } from '../lib/secrets.ts';
import { LiveRegistry, type OcppSession } from './live-registry.ts';
import { createOcppMetrics } from './metrics.ts';
import type { Handshake, RpcClient } from './rpc.ts';

export interface OcppServerHandle {
  close(): Promise<void>;
}

const PROTOCOLS = ['ocpp2.0.1', 'ocpp1.6'] as const;

export async function attachOcpp(server: Server, deps: Deps): Promise<OcppServerHandle> {
  const metrics = createOcppMetrics(deps.metrics);
  const registry = new LiveRegistry(deps, metrics);
  deps.services.ocpp = registry;

  const rpc = new RPCServer({
    protocols: [...PROTOCOLS],
    strictMode: false,
    callTimeoutMs: deps.config.OCPP_CALL_TIMEOUT_SECONDS * 1000,
    callConcurrency: 1,
    // ws closes a connection whose frame exceeds the cap (1009)
    wssOptions: { maxPayload: deps.config.OCPP_MAX_FRAME_BYTES },
  });

  rpc.auth(async (accept, reject, hs: Handshake) => {
    try {
      if (hs.endpoint !== '/ocpp' || !hs.identity) return reject(404, 'Not found');
      const row = await deps.db
        .selectFrom('chargers')
        .select(['id', 'password_hash'])
        .where('ocpp_identity', '=', hs.identity)
        .where('status', '=', 'active')
        .executeTakeFirst();
      const password = hs.password?.toString('utf8');
      if (!row || !row.password_hash || password === undefined || !timingSafeEqualStr(hashSecret(password), row.password_hash)) {
        return reject(401, 'Unauthorized');
      }
      let protocol: OcppSession['protocol'] | undefined = PROTOCOLS.find((p) => hs.protocols.has(p));
      if (hs.protocols.size === 0) {
        // C4.1: a charger offering no subprotocol is served as the configured default, never unvalidated
        if (deps.config.OCPP_DEFAULT_PROTOCOL === 'refuse') return reject(400, 'A WebSocket subprotocol is required');
        protocol = deps.config.OCPP_DEFAULT_PROTOCOL;
        return accept({ chargerId: row.id, protocol } satisfies OcppSession, false);
      }
      if (!protocol) return reject(400, `Unsupported subprotocol; this gateway speaks ${PROTOCOLS.join(', ')}`);
      return accept({ chargerId: row.id, protocol } satisfies OcppSession, protocol);
    } catch (err) {
      deps.logger.error({ err }, 'ocpp: upgrade auth failed');
      return reject(500, 'Internal error');
    }
  });

  rpc.on('client', (client: RpcClient) => registry.attach(client, client.session as OcppSession));
  rpc.on('error', (err: unknown) => deps.logger.warn({ err }, 'ocpp: server error'));

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // C4.2: /ocpp/<identity>/ is the same as /ocpp/<identity>
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q >= 0 ? url.slice(0, q) : url;
    if (path.length > 1 && path.endsWith('/')) req.url = path.replace(/\/+$/, '') + (q >= 0 ? url.slice(q) : '');
    void rpc.handleUpgrade(req, socket as import('node:net').Socket, head);
  };
  server.on('upgrade', onUpgrade);

  return {
    async close() {
      server.off('upgrade', onUpgrade);
      await rpc.close({ force: true });
      await registry.close();
      delete deps.services.ocpp;
    },
  };
}
