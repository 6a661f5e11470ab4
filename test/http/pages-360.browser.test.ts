// C7.3: every customer page fits a 360 px wide phone without horizontal scrolling (long EANs, addresses, names and
// hashes wrap), in headless Chromium; a screenshot of each page is saved into docs/screenshots/ (docs/pages.md).
import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { anAccount } from '../helpers/onboarding-factories.ts';
import { anEan, postCustomers, registerEans } from '../helpers/partner-factories.ts';

const SHOTS = path.resolve('docs/screenshots');
let svc: TestService;
let partner: TestPartner;
let browser: Browser;

beforeAll(async () => {
  svc = await createTestService({ listen: true });
  partner = await aPartner(svc.deps, { name: 'Zonnig Laden en Installatietechniek Noord-Holland B.V.' });
  browser = await launchChromium('The 360 px page test');
  fs.mkdirSync(SHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await svc?.close();
});

async function phone(): Promise<Page> {
  return browser.newPage({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 1, javaScriptEnabled: false });
}

/** no horizontal overflow at 360 px, the footer present; then the screenshot */
async function check(page: Page, shot: string) {
  const width = await page.evaluate('document.documentElement.scrollWidth');
  expect(width, `${shot}: scrollWidth`).toBeLessThanOrEqual(360);
  expect(await page.locator('footer#operator').count()).toBe(1);
  await page.screenshot({ path: path.join(SHOTS, `${shot}.png`), fullPage: true });
}

describe('pages at 360 px', () => {
  it('the signing page, its confirmation and its 404 page', async () => {
    const a = await anAccount(svc, partner, {
      display_name: 'Vereniging van Eigenaren Appartementencomplex De Langgerekte Zonnewijzer',
      person: { full_name: 'Johanna Wilhelmina Cornelia van Oldenbarnevelt-Tjarda van Starkenborgh', email: 'johanna.van.oldenbarnevelt-tjarda@een-heel-lange-domeinnaam-test.nl' },
      connection: { street: 'Burgemeester van Karnebeek-Hoogerheijdenstraatweg', city: 'Oud-Beijerland' },
    });
    const res = await svc.app.inject({ method: 'POST', url: '/v1/mandate-links', headers: bearer(await partner.cpoToken()), payload: { connection_id: a.connection_id } });
    const page = await phone();
    expect((await page.goto(res.json().url))?.status()).toBe(200);
    await check(page, 'signing-page');
    await page.locator('#consent').check();
    await Promise.all([page.waitForLoadState('load'), page.locator('#sign').click()]);
    await page.waitForSelector('#signed');
    await check(page, 'signing-page-signed');
    expect((await page.goto(`${svc.url}/mandates/unknown-token`))?.status()).toBe(404);
    await check(page, 'signing-page-404');
    await page.close();
  });

  it('the claim page (asking for the address), the next step, the 410 page and the 404 page', async () => {
    const ean = anEan();
    await registerEans(svc.deps, [{ ean_code: ean, postal_code: '1811KX', house_number: '120', house_number_addition: 'BIS' }]);
    const created = await postCustomers(svc, partner.apiKey, {
      consent: true,
      send_invite: false,
      customers: [
        {
          name: 'Maximiliaan Alexander Ferdinand de Bruijn-Vanderschoot',
          email: 'maximiliaan.de.bruijn-vanderschoot@installatiebedrijf-langeweg-test.nl',
          type: 'zakelijk',
          company_name: 'Elektrotechnisch Installatiebedrijf De Bruijn-Vanderschoot en Zonen B.V.',
          kvk: '87654321',
          btw: 'NL123456789B01',
        },
      ],
    });
    const url = created.json().created[0].claim_url as string;
    const page = await phone();
    expect((await page.goto(url))?.status()).toBe(200);
    await check(page, 'claim-page');
    // the submit button sits below the last input, not beside it
    const input = await page.locator('#iban-hint').boundingBox();
    const button = await page.locator('#confirm').boundingBox();
    expect(button!.y).toBeGreaterThanOrEqual(input!.y + input!.height);

    await page.fill('#postal_code', '1811 KX');
    await page.fill('#house_number', '120-BIS');
    await page.fill('#street', 'Burgemeester van Karnebeek-Hoogerheijdenstraatweg');
    await page.fill('#city', 'Alkmaar');
    await page.fill('#iban', 'NL91 ABNA 0417 1643 00');
    await Promise.all([page.waitForLoadState('load'), page.click('#confirm')]);
    expect(await page.locator('#next-sign').count()).toBe(1);
    await check(page, 'claim-page-done');
    expect((await page.goto(url + '?locale=en'))?.status()).toBe(410);
    await check(page, 'claim-page-410');
    expect((await page.goto(`${svc.url}/claim/unknown-token`))?.status()).toBe(404);
    await check(page, 'claim-page-404');
    await page.close();
  });
});
