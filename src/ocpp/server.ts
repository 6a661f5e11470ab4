// OCPP WebSocket server on the service's port (C0.3, C4.1, C4.2): ocpp-rpc on fastify's 'upgrade' event.
// Upgrade: path /ocpp/<identity> (trailing slash tolerated) → Basic auth against the hashed charger password
// (401 otherwise) → subprotocol (2.0.1 preferred, none → OCPP_DEFAULT_PROTOCOL, only unknown ones → refused).
// Inbound messages are read tolerantly by our own adapters (strictMode off); what we send is schema-checked.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { RPCServer } from 'ocpp-rpc';
import type { Deps } from '../deps.ts';
import { COMMAND_SENT } from '../domain/chargers/commands.ts';
import { authenticateCharger, PROTOCOLS } from './charger-auth.ts';
import { OCPP_CONNECTED } from './connection-notices.ts';
import { BASIC_CHALLENGE, checkUpgrade, loggableIdentity, refuseUpgrade, serveWithoutUpgrade, SocketBounds } from './edge.ts';
import { startInstanceLease } from './instance-lease.ts';
import { LiveRegistry, type OcppSession } from './live-registry.ts';
import { createOcppMetrics } from './metrics.ts';
import { closeNotable } from './notable-events.ts';
import { RefusalLog } from './refusal-log.ts';
import type { Handshake, RpcClient } from './rpc.ts';

export interface OcppServerHandle {
  /** this process's sockets (deps.ocpp, set by startService) */
  registry: LiveRegistry;
  close(): Promise<void>;
}

/** Longest wait at shutdown for the chargers' messages already read to be answered (D120). */
export const OCPP_DRAIN_MS = 5_000;

/**
 * D120: at shutdown each socket answers the messages it has read (committed first, as always), then closes with
 * 1001 (going away) so its charger reconnects, to another process or this one restarted. A message read after the
 * drain began is not answered (ocpp-rpc drops a call once the socket is closing): its charger sends it again
 * after reconnecting. Past `ms`, what is still open is cut.
 */
async function drain(clients: RpcClient[], ms: number): Promise<void> {
  if (clients.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const closes = clients.map((c) => c.close({ code: 1001, reason: 'Server shutting down', awaitPending: true }).catch(() => undefined));
  await Promise.race([Promise.all(closes), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
  clearTimeout(timer);
  for (const c of clients) {
    const socket = c.handshake.request.socket;
    if (!socket.destroyed) socket.destroy();
  }
}

export async function attachOcpp(server: Server, deps: Deps): Promise<OcppServerHandle> {
  const metrics = createOcppMetrics(deps.metrics);
  const registry = new LiveRegistry(deps, metrics);
  const lease = await startInstanceLease(deps, registry.instanceId); // C4.8: before any charger connects
  // before any charger connects, too: this process hears commands for its chargers and another process's news of
  // their newer connections (the registry subscribes once it holds a socket; until LISTEN was in place such an event
  // went unheard and only the slow poll or sweep found it, D86)
  await Promise.all([COMMAND_SENT, OCPP_CONNECTED].map((topic) => deps.bus?.listening(topic)));

  const rpc = new RPCServer({
    protocols: [...PROTOCOLS],
    strictMode: false,
    callTimeoutMs: deps.config.OCPP_CALL_TIMEOUT_SECONDS * 1000,
    callConcurrency: 1,
    // a dead TCP connection is found by a ping, but a charger that speaks proves it is there: only a silent socket
    // is pinged (10,000 sockets pinged every 30 s were 5 % of the process's CPU at a steady fleet rate)
    pingIntervalMs: deps.config.OCPP_PING_INTERVAL_SECONDS * 1000,
    deferPingsOnActivity: true,
    // ws closes a connection whose frame exceeds the cap (1009)
    wssOptions: { maxPayload: deps.config.OCPP_MAX_FRAME_BYTES },
  });

  // Item 9: a line per refusal, with a reason code; never the password or the Authorization header. D219: every
  // refusal counted, and logged at once when it is the first of its reason and identity (or address) in the interval
  const refusals = new RefusalLog(deps.logger, metrics.handshakeRefused);
  const refused = (req: IncomingMessage, status: number, reason: string, identity?: string) =>
    refusals.refused(status, reason, identity, req.socket.remoteAddress);
  // C4.12: open sockets plus handshakes in flight, and a deadline for each handshake (the auth does a DB lookup)
  const bounds = new SocketBounds(deps.config.OCPP_MAX_CONNECTIONS, deps.config.OCPP_HANDSHAKE_TIMEOUT_SECONDS * 1000, (req, socket) => {
    refused(req, 408, 'handshake_timeout', identityOf(req));
    refuseUpgrade(socket, 408);
  });
  const identities = new WeakMap<IncomingMessage, string>();
  const identityOf = (req: IncomingMessage) => identities.get(req);

  rpc.auth(async (accept, reject, hs: Handshake) => {
    try {
      if (hs.endpoint !== '/ocpp' || !hs.identity) {
        refused(hs.request, 404, 'not_found', loggableIdentity(hs.identity));
        return reject(404, 'Not found');
      }
      const v = await authenticateCharger(deps, hs, registry.credentialLookup);
      if (!v.ok) {
        refused(hs.request, v.status, v.reason, hs.identity);
        // D184: a 401 carries its challenge; ocpp-rpc's reject writes no header of ours, so the answer is written here
        // and the socket ended: ocpp-rpc sees it close and has nothing left to write (its reject finds it unwritable)
        if (v.status === 401) return refuseUpgrade(hs.request.socket, 401, v.message, undefined, BASIC_CHALLENGE);
        return reject(v.status, v.message);
      }
      const session: OcppSession = { chargerId: v.chargerId, protocol: v.protocol, registration: v.registration };
      return accept(session, v.negotiated ? v.protocol : false);
    } catch (err) {
      deps.logger.error({ err }, 'ocpp: upgrade auth failed');
      refused(hs.request, 500, 'auth_error', hs.identity);
      return reject(500, 'Internal error');
    }
  });

  // C4.12 (D111): a charger that sends but does not read its answers makes them pile up in this process (the kernel's
  // buffer full, node's growing without bound): past four frames' worth unread, its connection is closed
  const unreadLimit = 4 * deps.config.OCPP_MAX_FRAME_BYTES;
  rpc.on('client', (client: RpcClient) => {
    bounds.handshakeDone(client.handshake.request);
    registry.attach(client, client.session as OcppSession);
    if (client.protocol === 'ocpp1.6') {
      // D119: ocpp-rpc answers a frame it cannot read with 2.0.1's codes (RpcFrameworkError, MessageTypeNotSupported),
      // which OCPP 1.6 does not have; its FormationViolation says the same ("not conform the PDU structure"). The
      // answer is built before these events and sent after them, so the code is changed in place.
      const as16 = (frame: unknown) => {
        if (Array.isArray(frame) && frame[0] === 4 && (frame[2] === 'RpcFrameworkError' || frame[2] === 'MessageTypeNotSupported')) frame[2] = 'FormationViolation';
      };
      client.on('badMessage', (e: { response?: unknown }) => as16(e.response));
      client.on('response', (e: { payload?: unknown }) => as16(e.payload));
    }
    const socket = client.handshake.request.socket;
    client.on('message', () => {
      if (socket.destroyed || socket.writableLength <= unreadLimit) return;
      deps.logger.warn(
        { event: 'ocpp.unread_answers', identity: client.identity, unreadBytes: socket.writableLength },
        'ocpp: closed a charger that does not read its answers',
      );
      socket.destroy();
    });
  });
  rpc.on('error', (err: unknown) => deps.logger.warn({ err }, 'ocpp: server error'));

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // a peer reset during the handshake must not become an uncaught 'error' event
    socket.on('error', (err) => deps.logger.debug({ err }, 'ocpp: upgrade socket error'));
    if (socket.destroyed) return; // gone before we saw it: nothing to answer, nothing to count
    // D116: an upgrade to anything but a WebSocket (h2c) is not ours to take: the API's request is served as HTTP/1.1
    // (the OCPP endpoint keeps refusing it: a charger must speak WebSocket there)
    const offer = req.headers.upgrade;
    const ocppPath = (req.url ?? '').startsWith('/ocpp');
    if (!ocppPath && (typeof offer !== 'string' || offer.toLowerCase() !== 'websocket')) return serveWithoutUpgrade(server, req, socket, head);
    // C4.10: our checks first; ocpp-rpc only ever sees a canonical /ocpp/<percent-encoded identity>
    const v = checkUpgrade(req);
    if (!v.ok) {
      refused(req, v.status, v.reason, v.identity);
      // a WebSocket asked for elsewhere than the OCPP endpoint is answered in the API's shape (D116)
      if (!ocppPath) {
        return refuseUpgrade(socket, 404, undefined, { error: 'not_found', detail: 'No WebSocket here: chargers connect to /ocpp/<identity>.' });
      }
      return refuseUpgrade(socket, v.status);
    }
    if (!bounds.admit(req, socket)) {
      refused(req, 503, 'capacity', v.identity);
      return refuseUpgrade(socket, 503);
    }
    identities.set(req, v.identity);
    req.url = v.url;
    rpc.handleUpgrade(req, socket as import('node:net').Socket, head).catch((err: unknown) => {
      deps.logger.error({ err, identity: v.identity }, 'ocpp: upgrade failed');
      socket.destroy();
    });
  };
  server.on('upgrade', onUpgrade);

  return {
    registry,
    async close() {
      server.off('upgrade', onUpgrade);
      bounds.close();
      refusals.close();
      await drain(registry.clients(), OCPP_DRAIN_MS);
      await rpc.close({ force: true });
      await registry.close();
      closeNotable(deps.logger); // D242: the charger reports' repeats of the last interval
      await lease.stop();
    },
  };
}
