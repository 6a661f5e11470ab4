// The API reference at /docs in a real browser (issue 13 item 3): Debian's chromium driven by playwright-core.
// "Try it" with the seeded demo CPO client: the reference fetches a token with the client secret in the form body
// (the token endpoint refuses HTTP Basic) and GET /v1/accounts answers 200 in the page; a personal token works
// the same way on GET /chargers, and a partner key on POST /partner/customers with the document's example body.
// The page loads nothing from another host (the machine has no internet).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { createTestService, type TestService } from '../helpers/app.ts';

describe('/docs in chromium', () => {
  let svc: TestService;
  let browser: Browser;
  let page: Page;
  const external: string[] = [];
  const ref = `DOCS-${Date.now()}`;

  beforeAll(async () => {
    svc = await createTestService({ listen: true, seed: true });
    browser = await launchChromium('The API reference browser test');
    // an account of the demo partner, so the list the page fetches is not empty
    const demo = svc.demo!;
    const token = await fetch(`${svc.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', client_id: demo.partner.cpo_client.client_id, client_secret: demo.partner.cpo_client.client_secret }),
    });
    const { access_token } = (await token.json()) as { access_token: string };
    const created = await fetch(`${svc.url}/v1/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${access_token}` },
      body: JSON.stringify({
        cpo_external_ref: ref,
        person: { full_name: 'Anna de Vries' },
        connection: { ean_code: '871685900077777771', street: 'Keizersgracht', house_number: '12', postal_code: '1015CJ', city: 'Amsterdam' },
      }),
    });
    expect(created.status).toBe(201);
    page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    page.on('request', (r) => {
      if (!r.url().startsWith(svc.url) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) external.push(r.url());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await svc?.close();
  });

  it('authorizes with the demo CPO client (secret in the body) and GET /v1/accounts answers 200 in the page', async () => {
    const demo = svc.demo!;
    const res = await page.goto(`${svc.url}/docs/`);
    expect(res?.status()).toBe(200);
    // "Test Request" on GET /v1/accounts opens the client on that operation's credential: the CPO client
    await page.getByRole('button', { name: /Test Request.*get \/v1\/accounts/i }).first().click();
    const clientId = page.locator('.cm-content').filter({ has: page.locator('.cm-placeholder', { hasText: '12345' }) }).last();
    await clientId.click();
    await page.keyboard.type(demo.partner.cpo_client.client_id);
    await page.locator('input[id^="scalar-client"][placeholder="XYZ123"]').last().fill(demo.partner.cpo_client.client_secret);
    const [tokenRequest] = await Promise.all([
      page.waitForRequest((r) => r.url() === `${svc.url}/oauth/token` && r.method() === 'POST'),
      page.getByRole('button', { name: 'Authorize' }).last().click(),
    ]);
    const tokenResponse = await tokenRequest.response();
    expect(tokenResponse?.status()).toBe(200);
    expect(await tokenRequest.headerValue('authorization')).toBeNull();
    const form = new URLSearchParams(tokenRequest.postData() ?? '');
    expect(form.get('grant_type')).toBe('client_credentials');
    expect(form.get('client_id')).toBe(demo.partner.cpo_client.client_id);
    expect(form.get('client_secret')).toBe(demo.partner.cpo_client.client_secret);

    // the client shows the token it got, then sends it
    await page.getByText(/Access Token/).filter({ visible: true }).first().waitFor();
    const [accounts] = await Promise.all([
      page.waitForResponse((r) => r.url().startsWith(`${svc.url}/v1/accounts`) && r.request().method() === 'GET'),
      page.getByRole('button', { name: /^Send/ }).first().click(),
    ]);
    expect(accounts.status()).toBe(200);
    expect(await accounts.request().headerValue('authorization')).toMatch(/^Bearer \S+$/);
    await expect.poll(() => page.getByText('200 OK').first().isVisible()).toBe(true);
    await expect.poll(() => page.getByText(ref).first().isVisible()).toBe(true);
  });

  it('sends a personal token as a bearer token (GET /chargers answers 200)', async () => {
    const demo = svc.demo!;
    await page.keyboard.press('Escape');
    await page.goto(`${svc.url}/docs/#tag/personal-api/GET/chargers`);
    await page.getByRole('button', { name: /Test Request.*get \/chargers/i }).first().click();
    const token = page.locator('input[placeholder="Token"]').last();
    await token.waitFor();
    await token.fill(demo.user.token);
    const [chargers] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${svc.url}/chargers` && r.request().method() === 'GET'),
      page.getByRole('button', { name: /^Send/ }).first().click(),
    ]);
    expect(chargers.status()).toBe(200);
    expect(await chargers.request().headerValue('authorization')).toBe(`Bearer ${demo.user.token}`);
    await expect.poll(() => page.getByText(demo.charger.nickname).first().isVisible()).toBe(true);
  });

  it('sends a partner API key as a bearer token (POST /partner/customers with its example body answers 200)', async () => {
    const demo = svc.demo!;
    await page.keyboard.press('Escape');
    await page.goto(`${svc.url}/docs/#tag/partner-api/POST/partner/customers`);
    await page.getByRole('button', { name: /Test Request.*post \/partner\/customers/i }).first().click();
    const key = page.locator('input[placeholder="Token"]').last();
    await key.waitFor();
    await key.fill(demo.partner.api_key);
    const [upload] = await Promise.all([
      page.waitForResponse((r) => r.url() === `${svc.url}/partner/customers` && r.request().method() === 'POST'),
      page.getByRole('button', { name: /^Send/ }).first().click(),
    ]);
    expect(upload.status(), await upload.text()).toBe(200);
    expect(await upload.request().headerValue('authorization')).toBe(`Bearer ${demo.partner.api_key}`);
    expect(((await upload.json()) as { added: number }).added).toBe(2);
  });

  it('D241: the sidebar\'s method badges read at 4.5:1, and on a 375 px phone no code block runs past the right edge', async () => {
    /** relative luminance of [r, g, b] in sRGB 0–255 */
    const luminance = (rgb: number[]) => {
      const [r, g, b] = rgb.map((v) => v / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
    };
    await page.keyboard.press('Escape');
    await page.goto(`${svc.url}/docs/`);
    expect(await page.evaluate('document.documentElement.lang')).toBe('en');
    await page.locator('.sidebar-heading-type--get').first().waitFor();
    // each method badge's colour as sRGB pixels (the reference gives some in display-p3): painted on a canvas, read back
    const colours = (await page.evaluate(`['get', 'post', 'put', 'patch', 'delete'].flatMap((m) => {
      const e = document.querySelector('.sidebar-heading-type--' + m);
      if (!e) return [];
      const ctx = document.createElement('canvas').getContext('2d');
      ctx.fillStyle = getComputedStyle(e).color;
      ctx.fillRect(0, 0, 1, 1);
      return [[m, [...ctx.getImageData(0, 0, 1, 1).data.slice(0, 3)]]];
    })`)) as Array<[string, number[]]>;
    expect(colours.map(([m]) => m)).toEqual(expect.arrayContaining(['get', 'post']));
    for (const [method, colour] of colours) expect((1.05 / (luminance(colour) + 0.05)) >= 4.5, `${method} rgb(${colour.join()}) on white`).toBe(true);

    const phone = await browser.newPage({ viewport: { width: 375, height: 667 } });
    await phone.goto(`${svc.url}/docs/`);
    await phone.locator('pre code').first().waitFor();
    const past = await phone.evaluate(
      `[...document.querySelectorAll('pre, pre code')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map((e) => e.outerHTML.slice(0, 80))`,
    );
    expect(past).toEqual([]);
    await phone.close();
  });

  it('loaded nothing from another host', () => {
    expect(external).toEqual([]);
  });
});
