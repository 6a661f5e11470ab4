// A refused request whose client hangs up while the refusal is still being sent (an asynchronous onSend hook,
// such as the rate-limit count, is running) must not go on to the handler: the 30,000-case edge fuzz run found
// a Personal API handler running without a principal that way (src/http/plugins/reply-guard.ts).
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { principalOf } from '../../src/http/auth.ts';
import type { App } from '../../src/http/types.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SLOW_ON_SEND_MS = 300;

let svc: TestService;
let handlerRuns = 0;

async function slowRoute(app: App) {
  await app.register(async (scope) => {
    // stands in for any slow asynchronous onSend hook (a rate-limit count waiting on a busy counter row)
    scope.addHook('onSend', async (_req, _reply, payload) => {
      await sleep(SLOW_ON_SEND_MS);
      return payload;
    });
    scope.get('/test/personal-only', { config: { auth: { accepts: ['personal'] } } }, async (req) => {
      handlerRuns += 1;
      principalOf(req, 'personal');
      return { ok: true };
    });
  });
}

function send(port: number, opts: { hangUpAfterMs?: number }): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.write('GET /test/personal-only HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n');
    });
    let text = '';
    socket.on('data', (d) => (text += d.toString()));
    socket.on('close', () => resolve(text));
    socket.on('error', () => resolve(text));
    if (opts.hangUpAfterMs !== undefined) setTimeout(() => socket.destroy(), opts.hangUpAfterMs);
  });
}

beforeAll(async () => {
  svc = await createTestService({ listen: true, extraRoutes: [slowRoute] });
});
afterAll(async () => {
  await svc.close();
});

describe('a reply started early ends the lifecycle', () => {
  it('answers 401 and never runs the handler when the client waits', async () => {
    handlerRuns = 0;
    const text = await send(Number(new URL(svc.url).port), {});
    expect(text).toMatch(/^HTTP\/1\.1 401/);
    expect(handlerRuns).toBe(0);
  });

  it('never runs the handler when the client hangs up while the refusal is being sent', async () => {
    handlerRuns = 0;
    for (let i = 0; i < 3; i++) await send(Number(new URL(svc.url).port), { hangUpAfterMs: 50 });
    await sleep(SLOW_ON_SEND_MS * 2);
    expect(handlerRuns).toBe(0);
  });
});
