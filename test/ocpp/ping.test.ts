// WebSocket pings (OCPP_PING_INTERVAL_SECONDS): a charger's socket that has been silent for the interval gets a
// ping; one that keeps sending messages proves it is there and is not pinged.
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, ocppUrl } from '../helpers/ocpp-factories.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await createTestService({ listen: true, env: { OCPP_PING_INTERVAL_SECONDS: '5' } });
});
afterAll(async () => {
  await svc.close();
});

/** A bare WebSocket client (it never pings the server itself) that counts the server's pings. */
async function rawCharger(): Promise<{ ws: WebSocket; pings: () => number }> {
  const user = await aUser(svc.deps);
  const ch = await anOcppCharger(svc, user);
  const auth = 'Basic ' + Buffer.from(`${ch.identity}:${ch.password}`).toString('base64');
  const ws = new WebSocket(`${ocppUrl(svc)}/${encodeURIComponent(ch.identity)}`, ['ocpp1.6'], { headers: { authorization: auth } });
  let pings = 0;
  ws.on('ping', () => pings++);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, pings: () => pings };
}

it('pings a silent socket after the interval, and not a socket that keeps sending messages', { timeout: 30_000 }, async () => {
  const [silent, talking] = await Promise.all([rawCharger(), rawCharger()]);
  let n = 0;
  const talk = setInterval(() => talking.ws.send(JSON.stringify([2, `hb-${++n}`, 'Heartbeat', {}])), 1_000);
  try {
    await new Promise((r) => setTimeout(r, 8_000));
    expect(silent.pings()).toBeGreaterThanOrEqual(1);
    expect(talking.pings()).toBe(0);
    expect(n).toBeGreaterThanOrEqual(6);
  } finally {
    clearInterval(talk);
    silent.ws.close();
    talking.ws.close();
  }
});
