// D116: an Upgrade the service does not take (h2c: Java's HttpClient and curl --http2 offer it on every http://
// request) is ignored, as RFC 9110 allows, and the request served as HTTP/1.1 on the same connection (its body read),
// which then closes; a WebSocket asked for elsewhere than /ocpp/<identity> is answered in the API's error shape.
// Before, both were a plain-text 400 or 404 on every route. Raw sockets, as such a client writes.
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService({ listen: true });
});
afterAll(() => svc?.close());

/** Writes `request` on a new connection and collects what comes back until the server closes it (or 5 s pass). */
function exchange(request: string): Promise<{ data: string; closedByServer: boolean }> {
  const { port } = new URL(svc.url);
  return new Promise((resolve) => {
    let data = '';
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(request));
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ data, closedByServer: false });
    }, 5000);
    socket.on('data', (d) => (data += d.toString('utf8')));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ data, closedByServer: true });
    });
    socket.on('error', () => undefined);
  });
}

const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n';

describe('an Upgrade offer the service does not take (D116)', () => {
  it('h2c on a GET and on a POST with a body: served as HTTP/1.1, then the connection closes', async () => {
    const body = JSON.stringify({ grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'nothing' });
    const get = await exchange(`GET /healthz HTTP/1.1\r\nHost: t\r\n${h2c}\r\n`);
    expect(get.data).toMatch(/^HTTP\/1\.1 200 /);
    expect(get.data).toContain('{"status":"ok"}');
    expect(get.closedByServer).toBe(true);
    const post = await exchange(`POST /oauth/token HTTP/1.1\r\nHost: t\r\n${h2c}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    expect(post.data).toMatch(/^HTTP\/1\.1 401 /);
    expect(post.data).toContain('"error":"invalid_client"'); // the body was read and parsed
    expect(post.closedByServer).toBe(true);
  });

  it('a WebSocket asked for at another path: 404 in the API error shape', async () => {
    const { data: out } = await exchange('GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n');
    expect(out).toMatch(/^HTTP\/1\.1 404 /);
    expect(out).toContain('content-type: application/json'.replace('content-type', 'Content-Type'));
    expect(JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4))).toEqual({ error: 'not_found', detail: expect.stringContaining('/ocpp/') });
  });
});

describe('over TLS (D116)', () => {
  let tlsSvc: TestService;
  beforeAll(async () => {
    const fixtures = path.join(path.dirname(fileURLToPath(import.meta.url)), '../service/fixtures');
    tlsSvc = await createTestService({
      listen: true,
      env: { TLS_CERT_FILE: path.join(fixtures, 'test-only-tls-cert.pem'), TLS_KEY_FILE: path.join(fixtures, 'test-only-tls-key.pem') },
    });
  });
  afterAll(() => tlsSvc?.close());

  it('an h2c offer on an https connection is served as HTTP/1.1 too', async () => {
    const out = await new Promise<string>((resolve) => {
      let data = '';
      const socket = tls.connect({ port: Number(new URL(tlsSvc.url).port), host: '127.0.0.1', rejectUnauthorized: false }, () =>
        socket.write(`GET /healthz HTTP/1.1\r\nHost: t\r\n${h2c}\r\n`),
      );
      socket.on('data', (d) => (data += d.toString('utf8')));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(data));
      setTimeout(() => {
        socket.destroy();
        resolve(data);
      }, 5000);
    });
    expect(out).toMatch(/^HTTP\/1\.1 200 /);
    expect(out).toContain('{"status":"ok"}');
  });
});
