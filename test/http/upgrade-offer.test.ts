// D116: an Upgrade the service does not take (h2c: Java's HttpClient and curl --http2 offer it on every http://
// request) is ignored, as RFC 9110 allows, and the request served as HTTP/1.1 on the same connection, body and
// keep-alive included; a WebSocket asked for elsewhere than /ocpp/<identity> is answered in the API's error shape.
// Before, both were a plain-text 400 or 404 on every route. Raw sockets, as such a client writes.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService({ listen: true });
});
afterAll(() => svc?.close());

/** Writes `requests` on one connection and collects what comes back until `answers` responses arrived or it closes. */
function exchange(requests: string, answers: number): Promise<string> {
  const { port } = new URL(svc.url);
  return new Promise((resolve) => {
    let data = '';
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(requests));
    const done = () => {
      socket.destroy();
      resolve(data);
    };
    socket.on('data', (d) => {
      data += d.toString('utf8');
      if ((data.match(/HTTP\/1\.1 \d{3} /g) ?? []).length >= answers && /\r\n\r\n[\s\S]*\}$/.test(data)) done();
    });
    socket.on('close', done);
    socket.on('error', done);
    setTimeout(done, 5000);
  });
}

const h2c = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n';

describe('an Upgrade offer the service does not take (D116)', () => {
  it('h2c on a GET and on a POST with a body: served as HTTP/1.1, and the connection serves the next request', async () => {
    const body = JSON.stringify({ grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'nothing' });
    const out = await exchange(
      `GET /healthz HTTP/1.1\r\nHost: t\r\n${h2c}\r\n` +
        `POST /oauth/token HTTP/1.1\r\nHost: t\r\n${h2c}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      1,
    );
    expect(out).toMatch(/^HTTP\/1\.1 200 /);
    expect(out).toContain('{"status":"ok"}');
    const post = await exchange(`POST /oauth/token HTTP/1.1\r\nHost: t\r\n${h2c}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}` + 'GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n', 2);
    expect(post).toMatch(/^HTTP\/1\.1 401 /);
    expect(post).toContain('"error":"invalid_client"');
    expect(post).toMatch(/HTTP\/1\.1 200 [\s\S]*\{"status":"ok"\}/);
  });

  it('a WebSocket asked for at another path: 404 in the API error shape', async () => {
    const out = await exchange('GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n', 1);
    expect(out).toMatch(/^HTTP\/1\.1 404 /);
    expect(out).toContain('content-type: application/json'.replace('content-type', 'Content-Type'));
    expect(JSON.parse(out.slice(out.indexOf('\r\n\r\n') + 4))).toEqual({ error: 'not_found', detail: expect.stringContaining('/ocpp/') });
  });
});
