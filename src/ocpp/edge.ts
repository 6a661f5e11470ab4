// C4.10/C4.12: the WebSocket upgrade as our own code sees it before ocpp-rpc does. The path and identity are
// checked here (ocpp-rpc decodes the last path segment with decodeURIComponent and throws on bad input), the
// number of sockets is bounded, and a handshake that does not complete in time is cut. Nothing here throws.
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';

/** C4.10: OCPP 2.0.1's identifierString characters */
export const IDENTITY_PATTERN = /^[A-Za-z0-9*_=:+|@.-]{1,64}$/;

/** Longest piece of a refused, charger-supplied identity that goes into a log line. */
const LOGGED_IDENTITY_CHARS = 100;

export type EdgeVerdict =
  | { ok: true; identity: string; /** canonical request URL ocpp-rpc can decode safely */ url: string }
  | { ok: false; status: 400 | 404; reason: 'bad_upgrade' | 'not_found' | 'bad_encoding' | 'bad_identity' | 'bad_subprotocol'; identity?: string };

/** The identity as it may appear in a log line: charger-supplied text, so capped. */
export function loggableIdentity(raw: string): string {
  return raw.length > LOGGED_IDENTITY_CHARS ? raw.slice(0, LOGGED_IDENTITY_CHARS) + '…' : raw;
}

/** RFC 7230 token characters: a subprotocol name is a token */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * RFC 6455 4.1: Sec-WebSocket-Protocol is a comma-separated list of tokens, each listed once. Anything else
 * (an empty element, a non-token byte, a name twice) is the client's error; left to the WebSocket library it
 * ends in a 500.
 */
export function validSubprotocols(header: string | undefined): boolean {
  if (header === undefined) return true;
  const seen = new Set<string>();
  for (const part of header.split(',')) {
    const name = part.replace(/^[ \t]+|[ \t]+$/g, '');
    if (!TOKEN.test(name) || seen.has(name)) return false;
    seen.add(name);
  }
  return true;
}

/** Hop-by-hop headers of an upgrade offer, dropped when the request is served as plain HTTP/1.1 (D116). */
const UPGRADE_HEADERS = new Set(['upgrade', 'http2-settings', 'connection']);

/**
 * An upgrade the service does not take (h2c, which Java's HttpClient and curl --http2 offer on http://): the request
 * is given back to the HTTP server as written, without its offer and with `Connection: close`, on the same socket,
 * which the server then parses as any connection (the body included) and closes after its answer (a client that
 * offered to switch protocols is not left holding a connection it may not expect to reuse). RFC 9110 lets a server
 * ignore an Upgrade it does not support.
 */
export function serveWithoutUpgrade(server: import('node:http').Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion}`];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (!UPGRADE_HEADERS.has(req.rawHeaders[i]!.toLowerCase())) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
  }
  lines.push('Connection: close');
  socket.unshift(Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), head]));
  // a TLS socket is past its handshake: the HTTPS server's HTTP side listens for it as a secure connection
  server.emit(socket instanceof TLSSocket ? 'secureConnection' : 'connection', socket);
}

/** C4.2/C4.10: `/ocpp/<identity>` (one trailing slash tolerated, query ignored), valid encoding, allowed characters. */
export function checkUpgrade(req: IncomingMessage): EdgeVerdict {
  const upgrade = req.headers.upgrade;
  if (typeof upgrade !== 'string' || upgrade.toLowerCase() !== 'websocket') return { ok: false, status: 400, reason: 'bad_upgrade' };
  if (!validSubprotocols(req.headers['sec-websocket-protocol'])) return { ok: false, status: 400, reason: 'bad_subprotocol' };
  const raw = req.url ?? '';
  const q = raw.indexOf('?');
  let path = q >= 0 ? raw.slice(0, q) : raw;
  if (path.endsWith('/')) path = path.slice(0, -1);
  const parts = path.split('/');
  const segment = parts[2];
  if (parts.length !== 3 || parts[0] !== '' || parts[1] !== 'ocpp' || !segment) return { ok: false, status: 404, reason: 'not_found' };
  let identity: string;
  try {
    identity = decodeURIComponent(segment);
  } catch {
    return { ok: false, status: 400, reason: 'bad_encoding', identity: loggableIdentity(segment) };
  }
  // "." and ".." are dot segments: a URL parser (ocpp-rpc's included) would resolve them away
  if (!IDENTITY_PATTERN.test(identity) || identity === '.' || identity === '..') {
    return { ok: false, status: 404, reason: 'bad_identity', identity: loggableIdentity(identity) };
  }
  return { ok: true, identity, url: `/ocpp/${encodeURIComponent(identity)}` };
}

/**
 * A minimal HTTP/1.1 answer on the raw upgrade socket, then the socket is gone: plain text for the OCPP endpoint (a
 * charger reads the status only), or the API's `{error, detail}` body when `json` is given (D116).
 */
export function refuseUpgrade(
  socket: Duplex,
  status: number,
  message = STATUS_CODES[status] ?? 'Error',
  json?: { error: string; detail: string },
  headers: Record<string, string> = {},
): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  if (json) message = JSON.stringify(json);
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Connection: close',
    `Content-Type: ${json ? 'application/json' : 'text/plain'}; charset=utf-8`,
    `Content-Length: ${Buffer.byteLength(message)}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  socket.end(head.join('\r\n') + '\r\n\r\n' + message, () => socket.destroy());
}

/**
 * C4.12: sockets this process holds (open WebSockets plus handshakes in flight) and each handshake's deadline.
 * A socket counts from its upgrade request until it closes.
 */
export class SocketBounds {
  private readonly open = new Set<Duplex>();
  private readonly deadlines = new Map<IncomingMessage, NodeJS.Timeout>();

  constructor(
    private readonly maxSockets: number,
    private readonly handshakeMs: number,
    private readonly onTimeout: (req: IncomingMessage, socket: Duplex) => void,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** false when the process is full; otherwise the socket is counted and its handshake clock starts */
  admit(req: IncomingMessage, socket: Duplex): boolean {
    if (this.open.size >= this.maxSockets) return false;
    this.open.add(socket);
    const timer = setTimeout(() => {
      this.deadlines.delete(req);
      this.onTimeout(req, socket);
    }, this.handshakeMs);
    this.deadlines.set(req, timer);
    socket.once('close', () => {
      this.open.delete(socket);
      this.handshakeDone(req);
    });
    return true;
  }

  /** the handshake of this request completed (or failed): its deadline no longer applies */
  handshakeDone(req: IncomingMessage): void {
    const timer = this.deadlines.get(req);
    if (timer) clearTimeout(timer);
    this.deadlines.delete(req);
  }

  close(): void {
    for (const t of this.deadlines.values()) clearTimeout(t);
    this.deadlines.clear();
  }
}

/**
 * D184: the challenge of a 401 at the upgrade (RFC 7235 §3.1: a 401 carries WWW-Authenticate): HTTP Basic, the
 * scheme of Security Profiles 1 and 2, with the charger's identity as user name and UTF-8 (RFC 7617).
 */
export const BASIC_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="OCPP", charset="UTF-8"' };
