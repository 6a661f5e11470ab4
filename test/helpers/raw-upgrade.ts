// A WebSocket upgrade request written by hand on a raw TCP socket, for what a real client library would refuse
// to send (malformed encodings, odd paths, other Upgrade protocols). Resolves with the status line's code and
// the whole answer once the server closes the socket (or, for 101, once the head is in: then the test closes it).
import net from 'node:net';
import { Writable } from 'node:stream';

export interface RawAnswer {
  status: number;
  text: string;
}

export function rawUpgrade(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const all: Record<string, string> = {
    Host: `${hostname}:${port}`,
    Connection: 'Upgrade',
    Upgrade: 'websocket',
    'Sec-WebSocket-Version': '13',
    'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
    'Sec-WebSocket-Protocol': 'ocpp1.6',
    ...headers,
  };
  const head = `GET ${path} HTTP/1.1\r\n` + Object.entries(all).map(([k, v]) => `${k}: ${v}\r\n`).join('') + '\r\n';
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let text = '';
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      // an accepted upgrade stays open: its answer is complete with the head, and the test is done with it
      if (text.startsWith('HTTP/1.1 101') && text.includes('\r\n\r\n')) socket.destroy();
    });
    socket.on('error', () => {}); // a reset after the answer is still an answer
    socket.on('close', () => resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), text }));
    socket.write(head);
  });
}

/** Log lines written by a pino logger into an array (createLogger({ destination: sink })). */
export function logSink(): { lines: Array<Record<string, unknown>>; raw: string[]; sink: Writable } {
  const lines: Array<Record<string, unknown>> = [];
  const raw: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of String(chunk).split('\n').filter(Boolean)) {
        raw.push(l);
        lines.push(JSON.parse(l) as Record<string, unknown>);
      }
      cb();
    },
  });
  return { lines, raw, sink };
}
