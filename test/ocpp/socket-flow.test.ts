// D157: a charger sending as fast as it can is slowed by TCP, then closed. While a socket has OCPP_MAX_PENDING_CALLS
// calls waiting it is not read (the calls after them wait in the network instead of being answered "busy"), and a
// socket that goes on sending past that bound (calls answered "busy", frames that are not OCPP) beyond
// OCPP_MESSAGES_PER_SECOND (a burst of OCPP_MESSAGE_BURST) is closed with 1008; one that waits for its answers never is.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createLogger } from '../../src/logger.ts';
import { lockTable } from '../helpers/lock-table.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, eventually, type TestCharger } from '../helpers/ocpp-factories.ts';
import { logSink } from '../helpers/raw-upgrade.ts';

const log = logSink();
let svc: TestService;
let user: { userId: string };

beforeAll(async () => {
  // the defaults: 16 pending calls, 20 messages a second with bursts of 100
  svc = await createTestService({ listen: true, logger: createLogger({ level: 'info', destination: log.sink }) });
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

async function rawSocket(ch: TestCharger): Promise<{ ws: WebSocket; answers: unknown[][]; closed: Promise<{ code: number; reason: string }> }> {
  const auth = 'Basic ' + Buffer.from(`${ch.identity}:${ch.password}`).toString('base64');
  const ws = new WebSocket(svc.url.replace(/^http/, 'ws') + `/ocpp/${ch.identity}`, ['ocpp1.6'], { headers: { authorization: auth } });
  const answers: unknown[][] = [];
  ws.on('message', (d) => answers.push(JSON.parse(d.toString()) as unknown[]));
  const closed = new Promise<{ code: number; reason: string }>((r) => ws.once('close', (code, reason) => r({ code, reason: reason.toString() })));
  await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
  return { ws, answers, closed };
}


describe('a socket with its calls pending is not read (D157)', () => {
  it('calls sent after the 16th wait for room and are answered, not refused "busy"', async () => {
    const { ws, answers } = await rawSocket(await anOcppCharger(svc, user));
    const unlock = await lockTable(svc, 'ocpp_chargers');
    try {
      // the first call writes the connector status and waits on the lock; 15 more queue behind it: 16 pending
      ws.send(JSON.stringify([2, 'm0', 'StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Available' }]));
      for (let i = 1; i < 16; i++) ws.send(JSON.stringify([2, `m${i}`, 'Heartbeat', {}]));
      await new Promise((r) => setTimeout(r, 200));
      // four more, one by one, while all 16 wait: the gateway reads none of them yet
      for (let i = 16; i < 20; i++) {
        ws.send(JSON.stringify([2, `m${i}`, 'Heartbeat', {}]));
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(answers).toEqual([]); // before: m16–m19 were answered GenericError "busy" at once
    } finally {
      await unlock();
    }
    await eventually(() => expect(answers).toHaveLength(20));
    expect(answers.map((a) => [a[0], a[1]])).toEqual(Array.from({ length: 20 }, (_, i) => [3, `m${i}`]));
    ws.close();
  });
});

describe('a socket sending beyond its rate is closed (D157)', () => {
  it('a Heartbeat flood is cut with 1008 after its burst; the process serves another charger as before', async () => {
    const ch = await anOcppCharger(svc, user);
    const { ws, answers, closed } = await rawSocket(ch);
    let close: { code: number; reason: string } | undefined;
    void closed.then((c) => (close = c));
    let sent = 0;
    for (; sent < 2_000 && ws.readyState === WebSocket.OPEN; sent++) {
      ws.send(JSON.stringify([2, `f${sent}`, 'Heartbeat', {}]));
      if (sent % 100 === 99) await new Promise((r) => setImmediate(r));
    }
    // before: nothing closed it, and every one of the 2,000 was read and answered (most "busy")
    await eventually(() => expect(close !== undefined || answers.length === sent).toBe(true), 10_000);
    expect(close).toEqual({ code: 1008, reason: 'Message rate exceeded' });
    expect(answers.length).toBeLessThan(200); // the burst of 100, and no more than what one read held after it
    expect(log.lines).toContainEqual(expect.objectContaining({ event: 'ocpp.rate_exceeded', identity: ch.identity, perSecond: 20, burst: 100 }));
    expect(await svc.deps.metrics.getSingleMetricAsString('ocpp_rate_closed_sockets_total')).toMatch(/protocol="ocpp1.6"} 1/);

    const other = await connectCharger(svc, await anOcppCharger(svc, user), 'ocpp1.6');
    expect(await other.call('Heartbeat', {})).toHaveProperty('currentTime');
    await other.close();
  });

  it('a charger that waits for each answer is never closed, however fast it replays its backlog', async () => {
    // OCPP-J: one call at a time, the next when the last is answered. A charger back from a day offline replays its
    // stored messages so, as fast as the gateway answers: far above 20 a second, and it must not be cut for it
    const cli = await connectCharger(svc, await anOcppCharger(svc, user), 'ocpp1.6');
    let closed = false;
    cli.once('close', () => (closed = true));
    for (let i = 0; i < 400; i++) expect(await cli.call('Heartbeat', {})).toHaveProperty('currentTime');
    expect(closed).toBe(false);
    await cli.close();
  });

  it('a burst under the limit is answered and the socket stays open', async () => {
    const { ws, answers, closed } = await rawSocket(await anOcppCharger(svc, user));
    let isClosed = false;
    void closed.then(() => (isClosed = true));
    for (let i = 0; i < 90; i++) ws.send(JSON.stringify([2, `b${i}`, 'Heartbeat', {}]));
    await eventually(() => expect(answers).toHaveLength(90));
    expect(isClosed).toBe(false);
    ws.send(JSON.stringify([2, 'after', 'Heartbeat', {}]));
    await eventually(() => expect(answers.at(-1)).toMatchObject([3, 'after', { currentTime: expect.any(String) }]));
    ws.close();
  });
});
