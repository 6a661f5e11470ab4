// D89: what Node's HTTP server refuses or answers itself before any route runs (a request that is not HTTP/1.1,
// headers over 16 KiB, a request timeout, no Host, an unknown Expect, CONNECT) is answered in the interface's
// {error, detail} shape, with a request id, and the connection closed; a broken request pipelined behind good ones
// is answered after them; the process keeps serving. Raw TCP, as a broken or hostile client sends it.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
  /** everything received, as text */
  raw: string;
}

/** Sends `request` on a new connection and reads until the server closes it. */
function send(svc: TestService, request: string | Buffer, timeoutMs = 10_000): Promise<Answer> {
  const { port } = new URL(svc.url);
  return new Promise((resolve, reject) => {
    let raw = '';
    const socket = net.connect(Number(port), '127.0.0.1');
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server did not close the connection; received: ${raw.slice(0, 200)}`));
    }, timeoutMs);
    socket.on('data', (d) => (raw += d.toString('latin1')));
    socket.on('error', () => {}); // a reset after the answer is one way of being closed
    socket.once('close', () => {
      clearTimeout(timer);
      const [head = '', ...rest] = raw.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
      let body: unknown;
      try {
        body = JSON.parse(rest.join('\r\n\r\n'));
      } catch {
        body = rest.join('\r\n\r\n');
      }
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine)?.[1] ?? 0), headers, body, raw });
    });
    socket.once('connect', () => socket.write(request));
  });
}

const HOST = 'Host: test\r\n';

const cases: Array<{ name: string; request: string; status: number; error: string }> = [
  { name: 'a header line without a colon', request: `GET /healthz HTTP/1.1\r\n${HOST}Bad Header\r\n\r\n`, status: 400, error: 'invalid_request' },
  { name: 'a request line that is not HTTP', request: 'GARBAGE\r\n\r\n', status: 400, error: 'invalid_request' },
  { name: 'an unknown HTTP version', request: `GET /healthz HTTP/9.9\r\n${HOST}\r\n`, status: 400, error: 'invalid_request' },
  { name: 'a NUL in the path', request: `GET /heal\0thz HTTP/1.1\r\n${HOST}\r\n`, status: 400, error: 'invalid_request' },
  { name: 'a space in the path', request: `GET /v1/a b HTTP/1.1\r\n${HOST}\r\n`, status: 400, error: 'invalid_request' },
  {
    name: 'Content-Length and Transfer-Encoding together (request smuggling)',
    request: `POST /oauth/token HTTP/1.1\r\n${HOST}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'a chunk size that is not hexadecimal',
    request: `POST /oauth/token HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n`,
    status: 400,
    error: 'invalid_request',
  },
  {
    name: 'a Content-Length past 2^64',
    request: `POST /oauth/token HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nContent-Length: 99999999999999999999999\r\n\r\n{}`,
    status: 400,
    error: 'invalid_request',
  },
  { name: 'headers over 16 KiB', request: `GET /healthz HTTP/1.1\r\n${HOST}X-Big: ${'a'.repeat(20_000)}\r\n\r\n`, status: 431, error: 'headers_too_large' },
  { name: 'a path over 16 KiB', request: `GET /v1/${'a'.repeat(20_000)} HTTP/1.1\r\n${HOST}\r\n`, status: 431, error: 'headers_too_large' },
  { name: 'an HTTP/1.1 request without Host', request: 'GET /healthz HTTP/1.1\r\n\r\n', status: 400, error: 'invalid_request' },
  {
    name: 'an Expect other than 100-continue',
    request: `POST /oauth/token HTTP/1.1\r\n${HOST}Content-Type: application/json\r\nContent-Length: 2\r\nExpect: 200-ok\r\n\r\n{}`,
    status: 417,
    error: 'expectation_failed',
  },
  { name: 'CONNECT', request: 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', status: 404, error: 'not_found' },
];

describe('requests the HTTP parser refuses (D89)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService({ listen: true, env: { HTTP_HEADERS_TIMEOUT_SECONDS: '1', HTTP_REQUEST_TIMEOUT_SECONDS: '2' } });
  });
  afterAll(() => svc?.close());

  it.each(cases)('$name: $status in the {error, detail} shape, the connection closed', async ({ request, status, error }) => {
    const a = await send(svc, request);
    expect(a.status, a.raw.slice(0, 300)).toBe(status);
    expect(a.headers['content-type']).toMatch(/^application\/json/);
    expect(a.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.headers['x-content-type-options']).toBe('nosniff'); // D246: as every other answer (D233)
    expect(Object.keys(a.body as object).sort()).toEqual(['detail', 'error']);
    expect(a.body).toMatchObject({ error, detail: expect.stringMatching(/\S/) });
    expect(Buffer.byteLength(a.raw.split('\r\n\r\n').slice(1).join('\r\n\r\n'), 'latin1')).toBe(Number(a.headers['content-length']));
  });

  it('the 400 names what the parser found', async () => {
    const a = await send(svc, `GET /healthz HTTP/1.1\r\n${HOST}Bad Header\r\n\r\n`);
    expect((a.body as { detail: string }).detail).toMatch(/^The request is not valid HTTP\/1\.1 \(HPE_[A-Z_]+\)\.$/);
  });

  it('headers that never finish: 408 in the {error, detail} shape', { timeout: 30_000 }, async () => {
    const { port } = new URL(svc.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    let raw = '';
    socket.on('data', (d) => (raw += d.toString('latin1')));
    socket.on('error', () => {});
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.write(`GET /healthz HTTP/1.1\r\n${HOST}`);
    const t = setInterval(() => (socket.destroyed ? clearInterval(t) : socket.write('X-Slow: a\r\n')), 200);
    await closed;
    clearInterval(t);
    expect(raw).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(raw.split('\r\n\r\n')[1]!)).toEqual({ error: 'request_timeout', detail: expect.stringMatching(/\S/) });
  });

  it('the OpenAPI document names every answer above', async () => {
    const doc = (await (await fetch(`${svc.url}/openapi.json`)).json()) as { info: { description: string } };
    const named = cases.filter((c) => c.error !== 'not_found');
    for (const [status, error] of [...named.map((c) => [c.status, c.error] as const), [408, 'request_timeout'] as const]) {
      expect(doc.info.description).toContain(`${status} \`${error}\``);
    }
  });

  it('a broken request pipelined behind good ones is answered after them, in order', async () => {
    const good = `GET /healthz HTTP/1.1\r\n${HOST}\r\n`;
    const a = await send(svc, good + good + `GET /healthz HTTP/1.1\r\n${HOST}Bad Header\r\n\r\n`);
    // each answer's status line follows the body before it
    const statuses = [...a.raw.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    expect(statuses, a.raw.slice(0, 600)).toEqual([200, 200, 400]);
    expect(a.raw).toMatch(/"status":"ok"[\s\S]*"status":"ok"[\s\S]*\{"error":"invalid_request","detail":"The request is not valid HTTP\/1\.1 \(HPE_[A-Z_]+\)\."\}$/);
  });

  it('HTTP/1.0 without Host is still served', async () => {
    const a = await send(svc, 'GET /healthz HTTP/1.0\r\n\r\n');
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ status: 'ok' });
  });

  it('the process keeps serving: a good request after a burst of broken ones', async () => {
    await Promise.all(cases.map((c) => send(svc, c.request)));
    const res = await fetch(`${svc.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});
