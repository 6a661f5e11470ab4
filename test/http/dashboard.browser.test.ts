// C7.2 the dashboard in headless Chromium at phone width, as an owner uses it: sign in through the link of the
// e-mail, watch the kWh of a running session rise while the charger (an OCPP 1.6 client here) sends MeterValues,
// without reloading the page; make a personal API token on the page, use it on the Personal API, revoke it on the
// page and see it refused. Every page fits 360 px; screenshots go to docs/screenshots/ (docs/pages.md).
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger } from '../helpers/ocpp-factories.ts';

const SHOTS = path.resolve('docs/screenshots');
let svc: TestService;
let browser: Browser;

beforeAll(async () => {
  svc = await createTestService({ listen: true });
  browser = await launchChromium('The dashboard test');
  fs.mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await svc?.close();
});

async function fits360(page: Page, shot: string): Promise<void> {
  expect(await page.evaluate('document.documentElement.scrollWidth'), `${shot}: scrollWidth`).toBeLessThanOrEqual(360);
  expect(await page.locator('footer#operator').count()).toBe(1);
  await page.screenshot({ path: path.join(SHOTS, `${shot}.png`), fullPage: true });
}

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const meter = (transactionId: number, at: number, wh: number) => ({
  connectorId: 1,
  transactionId,
  meterValue: [{ timestamp: iso(at), sampledValue: [{ value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh' }] }],
});

/**
 * Signs in as a browser does: the address, then the link from the e-mail, then the confirmation button. `busy`: first
 * the pressed sign-in button must say it is sending while its answer is on its way (D240).
 */
async function signInByMail(page: Page, email: string, shot?: string, busy = false): Promise<void> {
  await page.goto(`${svc.url}/dashboard?locale=en`);
  if (shot) await fits360(page, shot);
  await page.fill('#email', email);
  if (busy) {
    // the form is kept from leaving (a listener after the page's own cancels the submission), as if its answer were
    // slow: the pressed button must say it is sending, then the form is sent for real from a fresh page
    await page.evaluate("document.addEventListener('submit', (e) => e.preventDefault())");
    await page.click('#send-link');
    const state = () => page.evaluate("(() => { const b = document.getElementById('send-link'); return [b.getAttribute('aria-busy'), b.getAttribute('aria-disabled'), b.textContent].join('|'); })()");
    expect(await state()).toBe('true|true|Sending…');
    await page.goto(`${svc.url}/dashboard?locale=en`);
    expect(await state()).toBe('||Send me a sign-in link');
    await page.fill('#email', email);
  }
  await Promise.all([page.waitForLoadState('load'), page.click('#send-link')]);
  await page.waitForSelector('#link-sent');
  const mail = await svc.deps.db.selectFrom('outbox_messages').select('body').where('to_email', '=', email).executeTakeFirstOrThrow();
  const link = /(https?:\/\/\S+\/dashboard\/sign-in\/\S+)/.exec(mail.body)![1]!;
  await page.goto(link);
  await Promise.all([page.waitForURL(/\/dashboard\?locale=en$/), page.click('#confirm-sign-in')]);
  await page.waitForSelector('#user-email');
  expect(await page.textContent('#user-email')).toBe(email);
}

it('signs in by e-mail link, shows the kWh rising live, and makes, uses and revokes a token', { timeout: 90_000 }, async () => {
  const user = await aUser(svc.deps, { email: `eigenaar-${Date.now()}@voorbeeld-laden.nl` });
  const charger = await anOcppCharger(svc, user, { nickname: 'Laadpaal oprit' });
  const cli = await connectCharger(svc, charger, 'ocpp1.6');
  const t0 = Date.now() - 3_600_000;
  const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'OWNER1', meterStart: 10_000, timestamp: iso(t0) })) as { transactionId: number };

  const page = await browser.newPage({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 1 });
  try {
    // sign in: the address, then the link from the e-mail, then the confirmation button
    await signInByMail(page, user.email, 'dashboard-sign-in');

    // live: the session's kWh follows the charger's MeterValues without a reload
    const kwh = page.locator(`[data-charger-id="${charger.chargerId}"] [data-field="kwh"]`);
    await page.evaluate('window.__sameDocument = true');
    await cli.call('MeterValues', meter(transactionId, t0 + 600_000, 11_503));
    // to the Wh, as the meter (the API's kwh_so_far is 1.5, rounded to two decimals; D108)
    await expect.poll(() => kwh.textContent(), { timeout: 10_000 }).toBe('1.503 kWh');
    expect(await page.textContent(`[data-charger-id="${charger.chargerId}"] [data-field="meter"]`)).toBe('11.503 kWh');
    await cli.call('MeterValues', meter(transactionId, t0 + 1_200_000, 13_250));
    await expect.poll(() => kwh.textContent(), { timeout: 10_000 }).toBe('3.250 kWh');
    expect(await page.evaluate('window.__sameDocument')).toBe(true); // no reload happened
    expect(await page.textContent(`[data-charger-id="${charger.chargerId}"] [data-field="status"]`)).toBe('online');
    await fits360(page, 'dashboard');

    // a token made on the page works on the Personal API until it is revoked on the page
    await page.fill('#token-name', 'Home Assistant');
    await Promise.all([page.waitForLoadState('load'), page.click('#create-token')]);
    const token = (await page.textContent('#new-token'))!.trim();
    expect(token).toMatch(/^ptk_/);
    await fits360(page, 'dashboard-token');
    const use = () => fetch(`${svc.url}/chargers`, { headers: bearer(token) });
    const ok = await use();
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { chargers: Array<{ id: string }> }).chargers.map((c) => c.id)).toEqual([charger.chargerId]);
    await Promise.all([page.waitForLoadState('load'), page.click('#back')]);
    const card = page.locator('article.token', { hasText: 'Home Assistant' });
    await Promise.all([page.waitForLoadState('load'), card.locator('button.revoke').click()]);
    await page.waitForSelector('#flash');
    expect(await page.locator('article.token', { hasText: 'Home Assistant' }).count()).toBe(0);
    expect((await use()).status).toBe(401);

    // the Dutch page fits too
    await page.goto(`${svc.url}/dashboard?locale=nl`);
    expect(await page.textContent('#chargers h2')).toBe('Mijn laadpalen');
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);

    // signed out in another tab: this page's stream ends and is refused again, and the page says its figures may be
    // out of date instead of looking live (D109)
    await expect.poll(() => page.evaluate('document.documentElement.dataset.live'), { timeout: 10_000 }).toBe('live');
    // (the other tab's sign-out form, posted with this page's cookie and CSRF token without leaving the page)
    const signedOut = await page.evaluate(`(async () => {
      const csrf = document.querySelector('input[name="_csrf"]').value;
      const res = await fetch('/dashboard/sign-out?locale=nl', { method: 'POST', body: new URLSearchParams({ _csrf: csrf }), credentials: 'same-origin', redirect: 'manual' });
      return res.type === 'opaqueredirect' || res.ok;
    })()`);
    expect(signedOut).toBe(true);
    await expect.poll(() => page.evaluate('document.documentElement.dataset.live'), { timeout: 15_000 }).toBe('stale');
    expect(await page.textContent('#live-note')).toContain('kunnen verouderd zijn');
    expect(await page.getAttribute('#live-note', 'class')).toBe('meta stale');
  } finally {
    await page.close();
    await cli.close();
  }
});

it('starts and stops charging from the page; the session appears and ends live', { timeout: 90_000 }, async () => {
  const user = await aUser(svc.deps, { email: `laden-${Date.now()}@voorbeeld-laden.nl` });
  const charger = await anOcppCharger(svc, user, { nickname: 'Laadpaal garage' });
  const cli = await connectCharger(svc, charger, 'ocpp1.6');
  // the charger accepts, then starts (and later stops) a transaction with the id tag it was given, as a real one does;
  // it does so only once the page shows the answer, so the change can only reach the page through the stream
  let go!: () => void;
  let goStop!: () => void;
  const pageReady = new Promise<void>((r) => (go = r));
  const pageReadyToStop = new Promise<void>((r) => (goStop = r));
  cli.handle('RemoteStartTransaction', async ({ params }) => {
    const { idTag } = params as { idTag: string };
    void pageReady.then(async () => {
      const at = Date.now() - 600_000;
      const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag, meterStart: 2_000, timestamp: iso(at) })) as { transactionId: number };
      await cli.call('MeterValues', meter(transactionId, at + 300_000, 2_750)); // 750 Wh in 5 minutes: 9 kW
    });
    return { status: 'Accepted' };
  });
  cli.handle('RemoteStopTransaction', async ({ params }) => {
    const { transactionId } = params as { transactionId: number };
    void pageReadyToStop.then(() => cli.call('StopTransaction', { transactionId, meterStop: 3_000, timestamp: iso(Date.now()) }));
    return { status: 'Accepted' };
  });
  const page = await browser.newPage({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 1 });
  try {
    await signInByMail(page, user.email);
    const card = page.locator(`[data-charger-id="${charger.chargerId}"]`);
    await Promise.all([page.waitForURL(/msg=started/), card.locator('button.start').click()]);
    expect(await page.textContent('#flash')).toBe('The charger was asked to start charging.');
    expect(await card.locator('button.stop').count()).toBe(0);
    // the session the charger starts shows up without a reload: its kWh, and a stop button instead of the start
    await page.evaluate('window.__sameDocument = true');
    go();
    await expect.poll(() => card.locator('[data-field="kwh"]').textContent(), { timeout: 15_000 }).toBe('0.750 kWh');
    await expect.poll(() => card.locator('button.stop').isVisible(), { timeout: 5_000 }).toBe(true);
    expect(await card.locator('button.start').isVisible()).toBe(false);
    // the session list is drawn again with the new session in it
    await expect.poll(() => page.textContent('#session-list'), { timeout: 5_000 }).toContain('Laadpaal garage · still running');
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    await fits360(page, 'dashboard-charging');

    await Promise.all([page.waitForURL(/msg=stopped/), card.locator('button.stop').click()]);
    expect(await page.textContent('#flash')).toBe('The charger was asked to stop charging.');
    expect(await card.locator('button.start').isVisible()).toBe(false);
    await page.evaluate('window.__sameDocument = true');
    goStop();
    // the charger's StopTransaction ends the session: the start button comes back, live
    await expect.poll(() => card.locator('button.start').isVisible(), { timeout: 15_000 }).toBe(true);
    expect(await card.locator('button.stop').count()).toBe(0);
    expect(await card.locator('[data-field="kwh"]').textContent()).toBe('—');
    // the ended session in the list, with its kWh, and the month's chart, still without a reload
    await expect.poll(() => page.textContent('#session-list'), { timeout: 5_000 }).toMatch(/Laadpaal garage · Ended .*1\.00 kWh/);
    expect(await page.locator('#energy svg.chart').count()).toBe(1);
    expect(await page.evaluate('window.__sameDocument')).toBe(true);
    const ended = await svc.deps.db.selectFrom('charging_sessions').select(['status']).where('charger_id', '=', charger.chargerId).execute();
    expect(ended.map((r) => r.status)).toEqual(['completed']);
  } finally {
    await page.close();
    await cli.close();
  }
});

it('D240: keeps the keyboard user\'s place through live redraws, speaks only at a start or stop, and shows one kWh figure', { timeout: 90_000 }, async () => {
  const user = await aUser(svc.deps, { email: `toetsenbord-${Date.now()}@voorbeeld-laden.nl` });
  const charger = await anOcppCharger(svc, user, { nickname: 'Laadpaal carport' });
  const cli = await connectCharger(svc, charger, 'ocpp1.6');
  const t0 = Date.now() - 7_200_000;
  // an ended session (so the chart has a month to show) and a running one
  const first = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'OWNER1', meterStart: 1_000, timestamp: iso(t0) })) as { transactionId: number };
  await cli.call('StopTransaction', { transactionId: first.transactionId, meterStop: 3_000, timestamp: iso(t0 + 1_800_000) });
  const t1 = Date.now() - 1_800_000;
  const running = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'OWNER1', meterStart: 3_000, timestamp: iso(t1) })) as { transactionId: number };
  await cli.call('MeterValues', meter(running.transactionId, t1 + 300_000, 3_500));
  const page = await browser.newPage({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 1 });
  try {
    await signInByMail(page, user.email, undefined, true); // the sign-in button says it is sending
    await expect.poll(() => page.evaluate('document.documentElement.dataset.live'), { timeout: 10_000 }).toBe('live');
    const card = page.locator(`[data-charger-id="${charger.chargerId}"]`);
    const listed = page.locator('#session-list tr[data-session-id] [data-field="kwh"]');
    expect(await listed.textContent()).toBe(await card.locator('[data-field="kwh"]').textContent());

    // the status note is not written again at every event; the kWh is not announced; the list follows the card
    await page.evaluate(`(() => {
      window.__noteChanges = 0;
      new MutationObserver((m) => { window.__noteChanges += m.length; }).observe(document.getElementById('live-note'), { childList: true, characterData: true, subtree: true });
    })()`);
    await cli.call('MeterValues', meter(running.transactionId, t1 + 600_000, 3_750));
    await expect.poll(() => card.locator('[data-field="kwh"]').textContent(), { timeout: 10_000 }).toBe('0.750 kWh');
    await expect.poll(() => listed.textContent(), { timeout: 5_000 }).toBe('0.750 kWh');
    await cli.call('MeterValues', meter(running.transactionId, t1 + 900_000, 4_000));
    await expect.poll(() => card.locator('[data-field="kwh"]').textContent(), { timeout: 10_000 }).toBe('1.000 kWh');
    expect(await listed.textContent()).toBe('1.000 kWh');
    expect(await page.evaluate('window.__noteChanges')).toBe(0);
    expect(await page.textContent('#charging-news')).toBe('');

    // the chart's table opened from the keyboard stays open and focused when the session ends and the sections are drawn again
    await page.focus('#energy-summary');
    await page.keyboard.press('Enter');
    expect(await page.evaluate("document.getElementById('energy-details').open")).toBe(true);
    const drawn = () => page.evaluate('document.documentElement.dataset.sessionsDrawn ?? null');
    const before = await drawn();
    await cli.call('StopTransaction', { transactionId: running.transactionId, meterStop: 4_000, timestamp: iso(Date.now()) });
    await expect.poll(() => page.textContent('#charging-news'), { timeout: 10_000 }).toBe('Laadpaal carport stopped charging.');
    await expect.poll(drawn, { timeout: 10_000 }).not.toBe(before);
    expect(await page.evaluate('document.activeElement.id')).toBe('energy-summary');
    expect(await page.evaluate("document.getElementById('energy-details').open")).toBe(true);

    // a session starts: announced once; its stop button focused, then the session ends: the focus goes to the card's heading
    const third = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'OWNER1', meterStart: 4_000, timestamp: iso(Date.now() - 60_000) })) as { transactionId: number };
    await expect.poll(() => page.textContent('#charging-news'), { timeout: 10_000 }).toBe('Laadpaal carport is charging now.');
    await expect.poll(() => card.locator('button.stop').count(), { timeout: 10_000 }).toBe(1);
    await card.locator('button.stop').focus();
    await cli.call('StopTransaction', { transactionId: third.transactionId, meterStop: 4_100, timestamp: iso(Date.now()) });
    await expect.poll(() => card.locator('button.stop').count(), { timeout: 10_000 }).toBe(0);
    expect(await page.evaluate(`document.activeElement === document.querySelector('[data-charger-id="${charger.chargerId}"] h3')`)).toBe(true);
    expect(await page.textContent('#charging-news')).toBe('Laadpaal carport stopped charging.');
  } finally {
    await page.close();
    await cli.close();
  }
});
