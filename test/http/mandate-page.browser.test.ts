// The signing page in a real headless browser (C2.3): Debian's chromium driven by playwright-core.
// .ci/run installs chromium; when it is missing this test fails with a clear message instead of skipping.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { anAccount } from '../helpers/onboarding-factories.ts';


describe('signing page in chromium', () => {
  let svc: TestService;
  let partner: TestPartner;
  let browser: Browser;
  const clock = testClock('2026-11-22T10:00:00Z');

  beforeAll(async () => {
    svc = await createTestService({ clock, listen: true });
    partner = await aPartner(svc.deps);
    browser = await launchChromium('The signing-page browser test');
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.close();
  });

  const issue = async (connectionId: string, extra: Record<string, unknown> = {}) => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/v1/mandate-links',
      headers: bearer(await partner.cpoToken()),
      payload: { connection_id: connectionId, ...extra },
    });
    expect(res.statusCode).toBe(201);
    return res.json() as { url: string };
  };
  const mandates = (connectionId: string) => svc.deps.db.selectFrom('mandates').selectAll().where('connection_id', '=', connectionId).execute();

  it('opens the link, shows clause and EAN, signs, and GET /v1/accounts reads mandate_status active', async () => {
    const a = await anAccount(svc, partner, { person: { full_name: 'Anna Browser', email: 'anna@klant-test.nl' } });
    const { url } = await issue(a.connection_id);
    expect(url.startsWith(svc.url)).toBe(true);
    const page = await browser.newPage({ javaScriptEnabled: false });
    const resp = await page.goto(url);
    expect(resp?.status()).toBe(200);
    await expect.poll(() => page.locator('#ean').textContent()).toBe(a.ean_code);
    const clause = await page.locator('#clause').textContent();
    expect(clause).toContain(a.ean_code);
    expect(clause).toContain('machtig');
    expect(await page.locator('#full_name').inputValue()).toBe('Anna Browser');
    await page.locator('#consent').check();
    await Promise.all([page.waitForLoadState('load'), page.locator('#sign').click()]);
    await page.waitForSelector('#signed');
    expect(await page.locator('#signed').textContent()).toContain('Machtiging ondertekend');

    const list = await svc.app.inject({
      method: 'GET',
      url: `/v1/accounts?cpo_external_ref=${encodeURIComponent(a.cpo_external_ref)}`,
      headers: bearer(await partner.cpoToken()),
    });
    expect(list.json().accounts[0].connections[0]).toMatchObject({ mandate_status: 'active', registration_status: 'ingediend', mandate_valid_from: '2026-11-22T10:00:00Z' });
    const [m] = await mandates(a.connection_id);
    expect(m).toMatchObject({ signatory_name: 'Anna Browser', signatory_email: 'anna@klant-test.nl', channel: 'signing_page', client_ip: '127.0.0.1' });
    expect(m!.user_agent).toMatch(/Chrome/);
    await page.close();
  });

  it('the English page is served for locale=en', async () => {
    const a = await anAccount(svc, partner);
    const { url } = await issue(a.connection_id, { locale: 'en' });
    const page = await browser.newPage({ javaScriptEnabled: false });
    await page.goto(url);
    expect(await page.locator('h1').textContent()).toBe('Sign the authorisation');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    await page.close();
  });

  it('a tampered link shows 404 and an expired link 410; neither records anything', async () => {
    const a = await anAccount(svc, partner);
    const { url } = await issue(a.connection_id);
    const page = await browser.newPage({ javaScriptEnabled: false });
    const t = url.split('/').pop()!;
    const tampered = url.slice(0, url.length - t.length) + (t[0] === 'A' ? 'B' : 'A') + t.slice(1);
    const r404 = await page.goto(tampered);
    expect(r404?.status()).toBe(404);
    expect(await page.locator('#error').textContent()).toBe('Link niet gevonden');

    // the customer opened the page, then let the link expire before signing
    await page.goto(url);
    await page.locator('#consent').check();
    clock.advance(31 * 86_400_000);
    const [submit] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.locator('#sign').click()]);
    expect(submit.status()).toBe(410);
    await page.waitForSelector('#error');
    expect(await page.locator('#error').textContent()).toBe('Link verlopen');
    const r410 = await page.goto(url);
    expect(r410?.status()).toBe(410);
    expect(await mandates(a.connection_id)).toHaveLength(0);
    const row = await svc.deps.db.selectFrom('connections').select(['mandate_status', 'registration_status']).where('id', '=', a.connection_id).executeTakeFirstOrThrow();
    expect(row).toEqual({ mandate_status: 'pending', registration_status: 'concept' });
    clock.set('2026-11-22T10:00:00Z');
    await page.close();
  });
});
