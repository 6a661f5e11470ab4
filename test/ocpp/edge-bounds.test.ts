// C4.12 bounded resources at the OCPP edge: OCPP_MAX_CONNECTIONS per process (503 beyond it), the WebSocket
// handshake deadline (a stalled auth lookup cannot hold a socket), at most OCPP_MAX_PENDING_CALLS calls waiting
// per socket (more that were already read are answered "busy" and never processed). Stalls are made with a real table lock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createLogger } from '../../src/logger.ts';
import { lockTable } from '../helpers/lock-table.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, ocppClient, eventually } from '../helpers/ocpp-factories.ts';
import { logSink, rawUpgrade } from '../helpers/raw-upgrade.ts';

/** A client's WebSocket text frame (masked, as RFC 6455 requires of a client; the zero key leaves the bytes as they are). */
function maskedTextFrame(text: string): Buffer {
  const data = Buffer.from(text);
  if (data.length > 125) throw new Error('a short frame only');
  return Buffer.concat([Buffer.from([0x81, 0x80 | data.length, 0, 0, 0, 0]), data]);
}

const basic = (identity: string, password: string) => 'Basic ' + Buffer.from(`${identity}:${password}`).toString('base64');



describe('OCPP_MAX_CONNECTIONS (C4.12)', () => {
  const log = logSink();
  let svc: TestService;
  let user: { userId: string };
  beforeAll(async () => {
    svc = await createTestService({ listen: true, env: { OCPP_MAX_CONNECTIONS: '1' }, logger: createLogger({ level: 'info', destination: log.sink }) });
    user = await aUser(svc.deps);
  });
  afterAll(() => svc.close());

  it('the second charger gets 503 while the first is connected, and a slot frees when it leaves', async () => {
    const a = await anOcppCharger(svc, user);
    const b = await anOcppCharger(svc, user);
    const first = await connectCharger(svc, a, 'ocpp1.6');
    const second = ocppClient(svc, b.identity, b.password, ['ocpp1.6']);
    await expect(second.connect()).rejects.toMatchObject({ code: 503 });
    expect(log.lines.at(-1)).toMatchObject({ event: 'ocpp.refuse', status: 503, reason: 'capacity', identity: b.identity });
    // the path checks come first: a malformed request is still 400, not 503
    expect((await rawUpgrade(svc.url, '/ocpp/%E0%A4%A')).status).toBe(400);
    expect(await first.call('Heartbeat', {})).toHaveProperty('currentTime');

    await first.close();
    const again = await eventually(async () => {
      const c = ocppClient(svc, b.identity, b.password, ['ocpp1.6']);
      await c.connect();
      return c;
    });
    await again.close();
  });
});

describe('handshake deadline and pending calls (C4.12)', () => {
  const log = logSink();
  let svc: TestService;
  let user: { userId: string };
  beforeAll(async () => {
    svc = await createTestService({
      listen: true,
      // the rate bound (D157) far off: the unread-answers test below sends 600 calls as fast as it can
      env: { OCPP_HANDSHAKE_TIMEOUT_SECONDS: '1', OCPP_MAX_PENDING_CALLS: '16', OCPP_MESSAGE_BURST: '100000' },
      logger: createLogger({ level: 'info', destination: log.sink }),
    });
    user = await aUser(svc.deps);
  });
  afterAll(() => svc.close());

  it('an upgrade whose auth lookup stalls is cut at the deadline; the next one connects', async () => {
    const ch = await anOcppCharger(svc, user);
    const unlock = await lockTable(svc, 'chargers');
    let res;
    try {
      res = await rawUpgrade(svc.url, `/ocpp/${ch.identity}`, { authorization: basic(ch.identity, ch.password) });
    } finally {
      await unlock();
    }
    expect(res.status).toBe(408);
    expect(log.lines).toContainEqual(expect.objectContaining({ event: 'ocpp.refuse', status: 408, reason: 'handshake_timeout', identity: ch.identity }));

    // a completed handshake is not subject to the deadline
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    await new Promise((r) => setTimeout(r, 1500));
    expect(await cli.call('Heartbeat', {})).toHaveProperty('currentTime');
    await cli.close();
  });

  it('17+ calls sent without waiting: the excess is answered GenericError "busy" and not processed', async () => {
    const ch = await anOcppCharger(svc, user);
    const ws = new WebSocket(svc.url.replace(/^http/, 'ws') + `/ocpp/${ch.identity}`, ['ocpp1.6'], {
      headers: { authorization: basic(ch.identity, ch.password) },
    });
    const answers: unknown[][] = [];
    ws.on('message', (d) => answers.push(JSON.parse(d.toString()) as unknown[]));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));

    // the socket's first call writes the connector status: with the table locked, every call stays waiting in the queue
    const unlock = await lockTable(svc, 'ocpp_chargers');
    try {
      // all 20 in one TCP write, so the gateway has read them all before the 16th fills the socket (D157: a call
      // sent after that waits in the network, test/ocpp/socket-flow.test.ts)
      const frames = [JSON.stringify([2, 'm0', 'StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Available' }])];
      for (let i = 1; i < 20; i++) frames.push(JSON.stringify([2, `m${i}`, 'Heartbeat', {}]));
      (ws as unknown as { _socket: import('node:net').Socket })._socket.write(Buffer.concat(frames.map(maskedTextFrame)));
      await eventually(() => expect(answers).toHaveLength(4));
      expect(answers).toEqual(['m16', 'm17', 'm18', 'm19'].map((id) => [4, id, 'GenericError', 'busy', {}]));
    } finally {
      await unlock();
    }
    await eventually(() => expect(answers).toHaveLength(20));
    const results = answers.filter((a) => a[0] === 3);
    expect(results.map((a) => a[1])).toEqual(Array.from({ length: 16 }, (_, i) => `m${i}`));

    // the queue drained: the socket takes calls again
    ws.send(JSON.stringify([2, 'after', 'Heartbeat', {}]));
    await eventually(() => expect(answers.at(-1)).toMatchObject([3, 'after', { currentTime: expect.any(String) }]));
    ws.close();
  });

  it('a charger that sends but never reads its answers is closed once they pile up, and the process goes on (D111)', { timeout: 60_000 }, async () => {
    const ch = await anOcppCharger(svc, user);
    const ws = new WebSocket(svc.url.replace(/^http/, 'ws') + `/ocpp/${ch.identity}`, ['ocpp1.6'], {
      headers: { authorization: basic(ch.identity, ch.password) },
    });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const closed = new Promise<void>((r) => ws.once('close', () => r()));
    let isClosed = false;
    void closed.then(() => (isClosed = true));
    // stop reading: every answer (each carries the call's 100 KB message id back) stays with the server
    (ws as unknown as { _socket: import('node:net').Socket })._socket.pause();
    const id = 'x'.repeat(100_000);
    const heapBefore = process.memoryUsage().heapUsed;
    for (let i = 0; i < 600 && !isClosed; i++) {
      ws.send(JSON.stringify([2, `${id}${i}`, 'Heartbeat', {}]));
      if (i % 20 === 19) await new Promise((r) => setTimeout(r, 20));
    }
    await closed; // before: the answers piled up until the process ran out of memory
    expect(isClosed).toBe(true);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(200 * 1024 * 1024);
    // the process serves the other chargers as before
    const other = await connectCharger(svc, await anOcppCharger(svc, user), 'ocpp1.6');
    expect(await other.call('Heartbeat', {})).toHaveProperty('currentTime');
    await other.close();
  });
});
