// The simulator's own waiting: a call the central system never answers fails after the charger's call timeout (and
// the next call still works), and every charger sleeping on a fleet's one abort signal wakes when it is aborted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChargePoint, sleep } from '../../simulator/charge-point.ts';
import { createRpcServer, type SimRpcServer } from '../../simulator/rpc.ts';

let server: SimRpcServer;
let url = '';
let silentHeartbeats = true;

beforeAll(async () => {
  server = createRpcServer({ protocols: ['ocpp1.6'], strictMode: false });
  server.auth((accept) => accept({}, 'ocpp1.6'));
  server.on('client', (client) => {
    client.handle('BootNotification', async () => ({ status: 'Accepted', currentTime: new Date().toISOString(), interval: 300 }));
    client.handle('StatusNotification', async () => ({}));
    // a central system that never answers a Heartbeat while silentHeartbeats is set
    client.handle('Heartbeat', () => (silentHeartbeats ? new Promise(() => {}) : Promise.resolve({ currentTime: new Date().toISOString() })));
  });
  const http = await server.listen(0, '127.0.0.1');
  url = `ws://127.0.0.1:${(http.address() as import('node:net').AddressInfo).port}`;
});
afterAll(async () => {
  await server.close({ force: true });
});

describe('simulator timing', () => {
  it('a call left unanswered fails with "Call timeout" after the call timeout; the next call is answered', async () => {
    const cp = new ChargePoint({ url, identity: 'TIMING-1', protocol: 'ocpp1.6', callTimeoutMs: 300, heartbeats: false, autoReconnect: false });
    try {
      await cp.start();
      const t0 = performance.now();
      const err = await cp.send('Heartbeat', {}).then(
        () => null,
        (e: Error) => e,
      );
      const waited = performance.now() - t0;
      expect(err?.message).toBe('Call timeout');
      expect(err?.name).toBe('TimeoutError');
      expect(waited).toBeGreaterThanOrEqual(250);
      silentHeartbeats = false;
      await expect(cp.send('Heartbeat', {})).resolves.toHaveProperty('currentTime');
    } finally {
      await cp.close();
    }
  });

  it('thousands of sleepers on one abort signal all wake when it is aborted, and a sleep without one still ends', async () => {
    const ac = new AbortController();
    let woken = 0;
    const sleeps = Array.from({ length: 5000 }, () => sleep(60_000, ac.signal).then(() => woken++));
    const short = sleep(10, ac.signal);
    await short;
    expect(woken).toBe(0);
    ac.abort();
    await Promise.all(sleeps);
    expect(woken).toBe(5000);
    // an aborted signal ends a sleep at once
    const t0 = performance.now();
    await sleep(60_000, ac.signal);
    expect(performance.now() - t0).toBeLessThan(1000);
    await sleep(5);
  });
});
