// One HTTP exchange over a raw TCP socket (node:net), so the fuzzer can send what http.request and fetch refuse
// to build: bad percent-encodings, control characters, half-sent requests. Reads until the server closes (the
// requests say `Connection: close`), the head of a 101 or of an event stream arrives, or the time limit passes (= a hang).
import net from 'node:net';

export interface RawResponse {
  /** 0 when the server closed without a status line */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** no answer and no close within the time limit */
  hung: boolean;
  ms: number;
}

export function rawExchange(port: number, request: string | Buffer, opts: { timeoutMs: number; halfSend?: boolean }): Promise<RawResponse> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let done = false;
    const sock = net.connect({ port, host: '127.0.0.1' });
    const finish = (hung: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ ...parse(Buffer.concat(chunks)), hung, ms: performance.now() - t0 });
    };
    const timer = setTimeout(() => finish(true), opts.timeoutMs);
    sock.on('connect', () => {
      if (opts.halfSend) {
        // part of the request, then hang up: the server must drop it without harm
        sock.end(typeof request === 'string' ? request.slice(0, Math.max(1, request.length >> 1)) : request.subarray(0, request.length >> 1));
        setTimeout(() => finish(false), 20);
        return;
      }
      sock.write(request);
    });
    sock.on('data', (b: Buffer) => {
      chunks.push(b);
      const all = Buffer.concat(chunks);
      if (!all.includes('\r\n\r\n')) return;
      // a WebSocket handshake that succeeded, and an event stream (GET /chargers/stream), stay open by design:
      // their head is the whole answer
      if (/^HTTP\/1\.1 101 /.test(all.toString('latin1', 0, 13))) finish(false);
      else if (/^content-type:\s*text\/event-stream/im.test(all.toString('latin1', 0, all.indexOf('\r\n\r\n')))) finish(false);
    });
    sock.on('error', () => finish(false));
    sock.on('close', () => finish(false));
  });
}

function parse(buf: Buffer): Omit<RawResponse, 'hung' | 'ms'> {
  const head = buf.indexOf('\r\n\r\n');
  const text = buf.toString('latin1', 0, head >= 0 ? head : Math.min(buf.length, 200));
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  if (!m) return { status: 0, headers: {}, body: '' };
  const headers: Record<string, string> = {};
  for (const line of text.split('\r\n').slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = head >= 0 ? buf.subarray(head + 4) : Buffer.alloc(0);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body);
  return { status: Number(m[1]), headers, body: body.toString('utf8') };
}

function dechunk(b: Buffer): Buffer {
  const out: Buffer[] = [];
  let i = 0;
  while (i < b.length) {
    const eol = b.indexOf('\r\n', i);
    if (eol < 0) break;
    const size = parseInt(b.toString('latin1', i, eol), 16);
    if (!size) break;
    out.push(b.subarray(eol + 2, eol + 2 + size));
    i = eol + 2 + size + 2;
  }
  return Buffer.concat(out);
}

/** Builds a request; header values are written as given (the point is to send what clients would refuse). */
export function buildRequest(method: string, path: string, headers: Array<[string, string]>, body?: string | Buffer): Buffer {
  const b = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8');
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', ...headers.map(([k, v]) => `${k}: ${v}`)];
  if (b && !headers.some(([k]) => k.toLowerCase() === 'content-length' || k.toLowerCase() === 'transfer-encoding')) lines.push(`Content-Length: ${b.length}`);
  return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'utf8'), b ?? Buffer.alloc(0)]);
}
