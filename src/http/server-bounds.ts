// C4.12 bounds of the HTTP server: a stalled request is closed, and the number of plain HTTP connections is capped.
//
// Node checks headersTimeout and requestTimeout only on a timer (connectionsCheckingInterval, 30 s by default), so
// the check runs at least every 5 s: a request stalled in its headers or body is answered 408 and closed within
// HTTP_REQUEST_TIMEOUT_SECONDS + 5 s. The values are set on the server instance (read by Node when it starts
// listening), which serves the plain and the TLS server alike.
//
// HTTP_MAX_CONNECTIONS counts sockets that are not (yet) WebSockets, TLS handshakes included: an OCPP connection
// leaves the count at its upgrade (OCPP_MAX_CONNECTIONS bounds those), so a flood of idle HTTP sockets cannot
// exhaust the process's files while the chargers' sockets are never taken for HTTP ones. A charger's connection is
// an HTTP one until its upgrade, so the HTTP cap also takes the places the OCPP cap leaves unused: in a reconnect
// storm, when few WebSockets are open, every charger of a full process can be in its handshake at once; with the
// process full of WebSockets, HTTP_MAX_CONNECTIONS remain (D66). The sockets of a process never exceed
// OCPP_MAX_CONNECTIONS + HTTP_MAX_CONNECTIONS either way. Beyond the cap a new connection is closed at once (a
// charger retries its connect; an HTTP client sees a reset).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Counter, type Registry } from 'prom-client';
import type { Config } from '../config.ts';

type BoundsConfig = Pick<
  Config,
  'HTTP_REQUEST_TIMEOUT_SECONDS' | 'HTTP_HEADERS_TIMEOUT_SECONDS' | 'HTTP_KEEP_ALIVE_TIMEOUT_SECONDS' | 'HTTP_MAX_CONNECTIONS' | 'OCPP_MAX_CONNECTIONS'
>;

/** The timeouts as Node's server options (milliseconds). */
export function httpTimeouts(c: BoundsConfig) {
  const requestTimeout = c.HTTP_REQUEST_TIMEOUT_SECONDS * 1000;
  // Node wants headersTimeout <= requestTimeout
  const headersTimeout = Math.min(c.HTTP_HEADERS_TIMEOUT_SECONDS * 1000, requestTimeout);
  return {
    requestTimeout,
    headersTimeout,
    keepAliveTimeout: c.HTTP_KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
    // C4.12: checked at least every 5 s; more often when the bounds themselves are short (tests)
    connectionsCheckingInterval: Math.max(100, Math.min(5000, Math.floor(headersTimeout / 2))),
  };
}

const RELEASE = Symbol('httpConnectionRelease');
type Counted = Socket & { [RELEASE]?: () => void };

function refusedCounter(registry: Registry): Counter {
  const name = 'http_connections_refused_total';
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Counter;
  return new Counter({ name, help: 'Connections closed at once because HTTP_MAX_CONNECTIONS was reached (C4.12)', registers: [registry] });
}

export function applyServerBounds(server: Server, c: BoundsConfig, registry: Registry): void {
  Object.assign(server, httpTimeouts(c));
  const refused = refusedCounter(registry);
  let open = 0;
  /** upgraded sockets still open (the OCPP cap's share in use) */
  let upgraded = 0;
  // Counted at the TCP level on both kinds of server, so sockets still in their TLS handshake count too.
  server.on('connection', (socket: Counted) => {
    if (open >= c.HTTP_MAX_CONNECTIONS + Math.max(0, c.OCPP_MAX_CONNECTIONS - upgraded)) {
      refused.inc();
      socket.destroy();
      return;
    }
    open++;
    let counted = true;
    const release = () => {
      if (!counted) return;
      counted = false;
      open--;
    };
    socket[RELEASE] = release;
    socket.once('close', release);
  });
  // a WebSocket is no longer an HTTP connection: OCPP_MAX_CONNECTIONS counts it from here. On TLS the upgrade
  // carries the TLS socket, whose _parent is the TCP socket counted above.
  server.on('upgrade', (_req, socket: Counted & { _parent?: Counted }) => {
    (socket[RELEASE] ?? socket._parent?.[RELEASE])?.();
    if (socket.destroyed) return;
    upgraded++;
    socket.once('close', () => upgraded--);
  });
  gatePipelining(server, registry);
}

type Gated = Socket & { [IN_FLIGHT]?: number; [OVER]?: true };

function pipeliningCounter(registry: Registry): Counter {
  const name = 'http_pipelining_closed_total';
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Counter;
  return new Counter({ name, help: `Connections closed for more than ${MAX_PIPELINED} pipelined requests unanswered (D111, D154)`, registers: [registry] });
}

/**
 * D111: requests pipelined on one connection are parsed and started at once, whether or not their answers are read;
 * past MAX_PIPELINED unanswered on one connection it is closed (no client pipelines that deep).
 * D154: the bound sits in front of fastify. Node's parser emits every request of one read before the socket's
 * destruction takes effect, so a listener beside fastify's closed the socket only after fastify had started all of
 * them (1,500 `GET /openapi.json` in one write: RSS 226 MB → 1.9 GB, /healthz 6 s). Here fastify's own 'request' listener is
 * called through the gate: a request past the bound, and any later one of a closed connection, never reaches it.
 */
function gatePipelining(server: Server, registry: Registry): void {
  const closed = pipeliningCounter(registry);
  const handlers = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  server.removeAllListeners('request');
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket as Gated;
    // nobody can read the answer of a request on a closed socket
    if (socket[OVER] || socket.destroyed) return;
    const n = (socket[IN_FLIGHT] ?? 0) + 1;
    if (n > MAX_PIPELINED) {
      socket[OVER] = true;
      closed.inc();
      socket.destroy();
      return;
    }
    socket[IN_FLIGHT] = n;
    res.once('close', () => {
      socket[IN_FLIGHT] = (socket[IN_FLIGHT] ?? 1) - 1;
    });
    for (const handle of handlers) handle.call(server, req, res);
  });
}

/** Requests one connection may have started and not yet answered (HTTP/1.1 pipelining). */
export const MAX_PIPELINED = 32;
const IN_FLIGHT = Symbol('httpRequestsInFlight');
const OVER = Symbol('httpPipeliningOverBound');

/** C4.12: a TLS handshake must complete within the headers timeout (Node's default is 120 s). */
export function tlsHandshakeTimeout(c: Pick<Config, 'HTTP_HEADERS_TIMEOUT_SECONDS'>): number {
  return c.HTTP_HEADERS_TIMEOUT_SECONDS * 1000;
}

/** fastify's trustProxy from TRUST_PROXY: a hop count n trusts the n nearest addresses (proxy-addr's rule). */
export function trustProxyOption(v: Config['TRUST_PROXY']): false | string[] | ((addr: string, hop: number) => boolean) {
  if (typeof v === 'number') return (_addr, hop) => hop < v;
  return v;
}
