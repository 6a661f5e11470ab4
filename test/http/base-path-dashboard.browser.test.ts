// D212: the dashboard in headless Chromium behind a proxy that serves the service under /ere and strips it
// (PUBLIC_BASE_URL=http://127.0.0.1:<proxy>/ere). Signing in (its cookie), the live stream, the script's refresh and
// the stop form it draws, and the form's redirect all stay under /ere: the proxy answers anything else 404 and notes it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger } from '../helpers/ocpp-factories.ts';

const PREFIX = '/ere';
let svc: TestService;
let browser: Browser;
let proxy: http.Server;
let publicBase: string;
/** what the browser asked of the proxy outside the prefix: a URL that left the service */
const outside: string[] = [];

/** The proxy: `/ere/x` goes to the service as `/x` (streamed both ways, so the event stream flows); the rest is 404. */
function startProxy(target: () => number): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    if (!url.startsWith(`${PREFIX}/`)) {
      // the browser asks the origin for /favicon.ico by itself; no page names it
      if (url !== '/favicon.ico') outside.push(`${req.method} ${url}`);
      res.writeHead(404).end();
      return;
    }
    const up = http.request({ host: '127.0.0.1', port: target(), path: url.slice(PREFIX.length), method: req.method, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    res.on('close', () => up.destroy());
    req.pipe(up);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  proxy = await startProxy(() => Number(new URL(svc.url).port));
  publicBase = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${PREFIX}`;
  svc = await createTestService({ listen: true, env: { PUBLIC_BASE_URL: publicBase } });
  browser = await launchChromium('The dashboard behind a proxy at a path');
});
afterAll(async () => {
  await browser?.close();
  proxy?.closeAllConnections();
  await new Promise((r) => proxy?.close(r));
  await svc?.close();
});

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

it('signs in, follows a session live and stops it from the form the script drew, never leaving /ere', { timeout: 90_000 }, async () => {
  const user = await aUser(svc.deps, { email: `achter-proxy-${Date.now()}@voorbeeld-laden.nl` });
  const charger = await anOcppCharger(svc, user, { nickname: 'Laadpaal poort' });
  const cli = await connectCharger(svc, charger, 'ocpp1.6');
  cli.handle('RemoteStopTransaction', async () => ({ status: 'Accepted' }));
  const page = await browser.newPage();
  try {
    await page.goto(`${publicBase}/dashboard?locale=en`);
    await page.fill('#email', user.email);
    await Promise.all([page.waitForLoadState('load'), page.click('#send-link')]);
    await page.waitForSelector('#link-sent');
    const link = (await page.getAttribute('#sandbox-link', 'href'))!;
    expect(link.startsWith(`${publicBase}/dashboard/sign-in/`)).toBe(true);
    await page.goto(link);
    await Promise.all([page.waitForURL(`${publicBase}/dashboard?locale=en`), page.click('#confirm-sign-in')]);
    // the session cookie came back: the page is the signed-in dashboard, and its stream is open
    expect(await page.textContent('#user-email')).toBe(user.email);
    await expect.poll(() => page.evaluate('document.documentElement.dataset.live'), { timeout: 10_000 }).toBe('live');

    // a session starts at the charger: the stream tells the page, whose script draws the stop form and refreshes
    const t0 = Date.now() - 600_000;
    const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'OWNER1', meterStart: 1_000, timestamp: iso(t0) })) as { transactionId: number };
    await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [{ timestamp: iso(t0 + 300_000), sampledValue: [{ value: '1750', measurand: 'Energy.Active.Import.Register', unit: 'Wh' }] }] });
    const card = page.locator(`[data-charger-id="${charger.chargerId}"]`);
    await expect.poll(() => card.locator('[data-field="kwh"]').textContent(), { timeout: 10_000 }).toBe('0.750 kWh');
    const stop = card.locator('form[data-role="stop"]');
    await expect.poll(() => stop.count(), { timeout: 10_000 }).toBe(1);
    const action = new URL((await stop.getAttribute('action'))!, page.url()).href; // where the browser posts it
    expect(action.startsWith(`${publicBase}/dashboard/sessions/`)).toBe(true);
    await expect.poll(() => page.evaluate('document.documentElement.dataset.sessionsDrawn ?? null'), { timeout: 10_000 }).not.toBeNull();

    await Promise.all([page.waitForURL(/\/ere\/dashboard\?locale=en&msg=stopped$/), stop.locator('button').click()]);
    expect(await page.getAttribute('#flash', 'class')).toBe('flash'); // the charger accepted (a refusal reads "flash bad")
    expect(outside).toEqual([]);
  } finally {
    await page.close();
    await cli.close();
  }
});
