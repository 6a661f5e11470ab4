// C3.4 / C6.7: the claim page in a real headless Chromium (playwright-core): see the pre-registration,
// confirm, then the account exists and the page leads to the machtiging signing step. Claimed twice → 410,
// never a second user or account; an unknown or tampered token → 404.
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, aUser, type TestPartner } from '../helpers/factories.ts';
import { aPartnerCharger, anEan, postCustomers, registerEans, tokenOf } from '../helpers/partner-factories.ts';
import { eligibilityFacts } from '../../src/domain/accounts/eligibility.ts';


let svc: TestService;
let browser: Browser;
let partner: TestPartner;

beforeAll(async () => {
  svc = await createTestService({ listen: true });
  partner = await aPartner(svc.deps, { name: 'Zonnig Laden BV' });
  browser = await launchChromium('The claim page test');
});
afterAll(async () => {
  await browser?.close();
  await svc?.close();
});

async function draftFor(customer: Record<string, unknown>): Promise<{ url: string; draftId: string }> {
  const res = await postCustomers(svc, partner.apiKey, { consent: true, send_invite: false, customers: [customer] });
  expect(res.statusCode).toBe(200);
  const c = res.json().created[0];
  return { url: c.claim_url, draftId: c.draft_id };
}

const countUsers = async (email: string) =>
  (await svc.deps.db.selectFrom('users').select('id').where('email', '=', email).execute()).length;

describe('claim page in Chromium', () => {
  it('shows the draft, confirms it, creates user, account and connection, and links to the signing page', async () => {
    const ean = anEan();
    await registerEans(svc.deps, [{ ean_code: ean, postal_code: '1017CT', house_number: '20' }]);
    const charger = await aPartnerCharger(svc.deps, { partnerId: partner.partnerId, brand: 'Alfen', serial: 'CLAIM-1' });
    const { url, draftId } = await draftFor({
      name: 'Sanne de Vries',
      email: 'sanne@klant.nl',
      postal_code: '1017 CT',
      house_number: '20',
      city: 'Amsterdam',
      charger_brand: 'Alfen',
      charger_serial: 'CLAIM-1',
    });
    expect(url.startsWith(svc.url + '/claim/')).toBe(true);

    const page = await browser.newPage();
    const first = await page.goto(url);
    expect(first?.status()).toBe(200);
    expect(await page.locator('html').getAttribute('lang')).toBe('nl');
    expect(await page.locator('h1').textContent()).toBe('Uw aanmelding bevestigen');
    expect(await page.locator('#draft-name').textContent()).toBe('Sanne de Vries');
    expect(await page.locator('#draft-email').textContent()).toBe('sanne@klant.nl');
    expect(await page.locator('#draft-address').textContent()).toBe('20, 1017 CT Amsterdam');
    expect(await page.locator('#draft-ean').textContent()).toBe(ean);
    expect(await page.locator('body').textContent()).toContain('Zonnig Laden BV');

    await page.fill('#street', 'Herengracht');
    // the IBAN is asked here: a claimed customer has no other way to give it, and without it no ERE (spec: eligibility)
    expect(await page.locator('#iban').getAttribute('required')).not.toBeNull();
    await page.fill('#iban', 'nl91 abna 0417 1643 00');
    await Promise.all([page.waitForLoadState('load'), page.click('#confirm')]);
    expect(await page.locator('h1').textContent()).toBe('Uw account is aangemaakt');
    const signHref = await page.locator('#sign').getAttribute('href');
    expect(signHref).toMatch(new RegExp(`^${svc.url}/mandates/[A-Za-z0-9_-]+$`));

    // stored: the user, the concept account (partner_claim) with its connection, the claimed draft, the charger
    const user = await svc.deps.db.selectFrom('users').selectAll().where('email', '=', 'sanne@klant.nl').executeTakeFirstOrThrow();
    const account = await svc.deps.db.selectFrom('accounts').selectAll().where('owner_user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(account).toMatchObject({ access_channel: 'partner_claim', partner_id: partner.partnerId, display_name: 'Sanne de Vries' });
    expect(svc.deps.cipher.decrypt(account.iban_encrypted!)).toBe('NL91ABNA0417164300');
    expect((await eligibilityFacts(svc.deps.db, account.id)).iban_present).toBe(true);
    const conn = await svc.deps.db.selectFrom('connections').selectAll().where('account_id', '=', account.id).executeTakeFirstOrThrow();
    expect(conn).toMatchObject({ ean_code: ean, street: 'Herengracht', house_number: '20', city: 'Amsterdam', mandate_status: 'pending', registration_status: 'concept' });
    const draft = await svc.deps.db.selectFrom('partner_drafts').selectAll().where('id', '=', draftId).executeTakeFirstOrThrow();
    expect(draft).toMatchObject({ status: 'claimed', claimed_user_id: user.id, claimed_account_id: account.id, claimed_connection_id: conn.id });
    const ch = await svc.deps.db.selectFrom('chargers').selectAll().where('id', '=', charger.chargerId).executeTakeFirstOrThrow();
    expect(ch).toMatchObject({ owner_user_id: user.id, account_id: account.id });

    // the link leads to the onboarding area's signing page
    const signing = await page.goto(signHref!);
    expect(signing?.status()).toBe(200);
    expect(await page.locator('body').textContent()).toContain(ean);

    // claimed twice: a 410 page, and no second user or account
    const again = await page.goto(url);
    expect(again?.status()).toBe(410);
    expect(await page.locator('h1').textContent()).toBe('Al bevestigd');
    const post = await svc.app.inject({ method: 'POST', url: `/claim/${tokenOf(url)}`, payload: { street: 'Herengracht' } });
    expect(post.statusCode).toBe(410);
    expect(await countUsers('sanne@klant.nl')).toBe(1);
    expect((await svc.deps.db.selectFrom('accounts').select('id').where('owner_user_id', '=', user.id).execute()).length).toBe(1);
    await page.close();
  });

  it('speaks English with ?locale=en, links an existing user by e-mail; a business draft without an address asks for it', async () => {
    const ean = anEan();
    await registerEans(svc.deps, [{ ean_code: ean, postal_code: '3511AB', house_number: '7', house_number_addition: 'B' }]);
    const { url, draftId } = await draftFor({ name: 'Tom Bakker', email: 'tom@klant.nl', company_name: 'Bakker Advies', type: 'zakelijk', kvk: '12345678' });
    // the customer signed up directly after the upload: the claim links that user, it creates no second one
    const existing = await aUser(svc.deps, { email: 'TOM@klant.nl', full_name: 'Tom B.' });
    const page = await browser.newPage();
    await page.goto(url + '?locale=en');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    expect(await page.locator('h1').textContent()).toBe('Confirm your registration');
    expect(await page.locator('#draft-company').textContent()).toBe('Bakker Advies');
    expect(await page.locator('#draft-type').textContent()).toBe('business');
    expect(await page.locator('#ask-address').count()).toBe(1);
    /** the whole form, filled in right, and confirmed */
    const confirmAddress = async () => {
      for (const [field, value] of [['#postal_code', '3511ab'], ['#house_number', '7B'], ['#street', 'Oudegracht'], ['#city', 'Utrecht'], ['#iban', 'NL91ABNA0417164300']]) {
        await page.fill(field!, value!);
      }
      await Promise.all([page.waitForLoadState('load'), page.click('#confirm')]);
    };
    // the Dutch rules of the upload: a postal code with SA is never issued
    await page.fill('#postal_code', '3511 SA');
    await page.fill('#house_number', '7B');
    await page.fill('#street', 'Oudegracht');
    await page.fill('#city', 'Utrecht');
    await page.fill('#iban', 'NL91ABNA0417164300');
    await Promise.all([page.waitForLoadState('load'), page.click('#confirm')]);
    expect(await page.locator('#error').textContent()).toContain('postal code is not valid');
    expect(await page.locator('#house_number').inputValue()).toBe('7B');
    expect(await page.locator('#iban').inputValue()).toBe(''); // never echoed back
    await page.fill('#postal_code', '3511ab');
    await page.fill('#iban', 'NL91ABNA0417164300');
    // D129: the address is a user's: nothing is linked until its owner confirms from the link e-mailed to it
    await Promise.all([page.waitForLoadState('load'), page.click('#confirm')]);
    expect(await page.locator('h1').textContent()).toBe('Confirm through your e-mail');
    expect(await svc.deps.db.selectFrom('accounts').select('id').where('owner_user_id', '=', existing.userId).execute()).toEqual([]);
    const mails = await svc.deps.db.selectFrom('outbox_messages').select(['to_email', 'body']).where('draft_id', '=', draftId).where('kind', '=', 'claim_link_confirm').execute();
    expect(mails.map((m) => m.to_email)).toEqual(['tom@klant.nl']);
    const link = /(http\S+confirm=\S+)/.exec(mails[0]!.body)![1]!;
    // a code for another draft or user, or none, confirms nothing: the form posted without it sends no second mail
    await page.goto(link.replace(/confirm=[^&\s]+/, 'confirm=forged'));
    await confirmAddress();
    expect(await page.locator('h1').textContent()).toBe('Confirm through your e-mail');
    expect((await svc.deps.db.selectFrom('outbox_messages').select('id').where('draft_id', '=', draftId).where('kind', '=', 'claim_link_confirm').execute()).length).toBe(1);
    // the owner opens the link from the e-mail and confirms
    await page.goto(link);
    await confirmAddress();
    expect(await page.locator('h1').textContent()).toBe('Your account has been created');
    // the register found the EAN at the address; the machtiging is still to be signed, and the page says so
    expect(await page.locator('#next-sign').textContent()).toContain('not signed yet');
    expect(await page.locator('#sign').getAttribute('href')).toMatch(/\/mandates\//);
    const account = await svc.deps.db.selectFrom('accounts').selectAll().where('owner_user_id', '=', existing.userId).executeTakeFirstOrThrow();
    expect(account).toMatchObject({ access_channel: 'partner_claim', display_name: 'Bakker Advies', type: 'zakelijk' });
    const conn = await svc.deps.db.selectFrom('connections').selectAll().where('account_id', '=', account.id).executeTakeFirstOrThrow();
    expect(conn).toMatchObject({ ean_code: ean, postal_code: '3511 AB', house_number: '7', house_number_addition: 'B', street: 'Oudegracht', city: 'Utrecht' });
    expect((await svc.deps.db.selectFrom('users').select('id').where((eb) => eb(eb.fn('lower', ['email']), '=', 'tom@klant.nl')).execute()).length).toBe(1);
    const draft = await svc.deps.db.selectFrom('partner_drafts').selectAll().where('id', '=', draftId).executeTakeFirstOrThrow();
    expect(draft).toMatchObject({ status: 'claimed', claimed_user_id: existing.userId, claimed_connection_id: conn.id, postal_code: '3511 AB', ean_code: ean });
    // opened again: 410, and still the honest next step with the same signing link
    const again = await page.goto(url + '?locale=en');
    expect(again?.status()).toBe(410);
    expect(await page.locator('#next-sign').count()).toBe(1);
    await page.close();
  });

  it('shows a 404 page for an unknown or tampered token', async () => {
    const { url } = await draftFor({ name: 'Eva', email: 'eva@klant.nl' });
    const token = tokenOf(url);
    const tampered = token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');
    const page = await browser.newPage();
    for (const t of [tampered, 'nonsense', token + 'x']) {
      const res = await page.goto(`${svc.url}/claim/${t}`);
      expect(res?.status()).toBe(404);
      expect(await page.locator('h1').textContent()).toBe('Link niet gevonden');
    }
    const post = await svc.app.inject({ method: 'POST', url: `/claim/${tampered}`, payload: {} });
    expect(post.statusCode).toBe(404);
    expect(await countUsers('eva@klant.nl')).toBe(0);
    await page.close();
  });
});

describe('claim confirmation (HTTP)', () => {
  it('two simultaneous confirmations create one user and one account: the other gets 410', async () => {
    const ean = anEan();
    await registerEans(svc.deps, [{ ean_code: ean, postal_code: '1017CT', house_number: '21' }]);
    const { url, draftId } = await draftFor({ name: 'Gijs', email: 'gijs@klant.nl', postal_code: '1017CT', house_number: '21', city: 'Amsterdam' });
    const path = `/claim/${tokenOf(url)}`;
    const [a, b] = await Promise.all([
      svc.app.inject({ method: 'POST', url: path, payload: { street: 'Herengracht' } }),
      svc.app.inject({ method: 'POST', url: path, payload: { street: 'Herengracht' } }),
    ]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([200, 410]);
    expect(await countUsers('gijs@klant.nl')).toBe(1);
    const draft = await svc.deps.db.selectFrom('partner_drafts').selectAll().where('id', '=', draftId).executeTakeFirstOrThrow();
    const accounts = await svc.deps.db.selectFrom('accounts').select('id').where('owner_user_id', '=', draft.claimed_user_id!).execute();
    expect(accounts.map((x) => x.id)).toEqual([draft.claimed_account_id]);
  });

  it('asks for the street when EAN and address are known, and lets the customer pick among EAN candidates', async () => {
    const a = anEan();
    const b = anEan();
    await registerEans(svc.deps, [
      { ean_code: a, postal_code: '6811AA', house_number: '4', house_number_addition: 'A' },
      { ean_code: b, postal_code: '6811AA', house_number: '4', house_number_addition: 'B' },
    ]);
    const res = await postCustomers(svc, partner.apiKey, {
      consent: true,
      send_invite: false,
      customers: [{ name: 'Iris', email: 'iris@klant.nl', postal_code: '6811AA', house_number: '4', city: 'Arnhem' }],
    });
    const created = res.json().created[0];
    expect(created).toMatchObject({ ean_status: 'candidates', ean_candidates: 2 });
    const path = `/claim/${tokenOf(created.claim_url)}`;
    const form = await svc.app.inject({ method: 'GET', url: path });
    expect(form.statusCode).toBe(200);
    expect(form.headers['content-type']).toMatch(/^text\/html/);
    expect(form.body).toContain(`<option value="${a}">`);
    const wrong = await svc.app.inject({ method: 'POST', url: path, payload: { street: 'Markt', ean: anEan() } });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('id="error"');
    const noStreet = await svc.app.inject({ method: 'POST', url: path, payload: { ean: b } });
    expect(noStreet.statusCode).toBe(400);
    expect(await countUsers('iris@klant.nl')).toBe(0);
    // an IBAN that is not one: the form again with the error, nothing created, the value not echoed
    const badIban = await svc.app.inject({ method: 'POST', url: path, payload: { ean: b, street: 'Markt', iban: 'NL91-ABNA' } });
    expect(badIban.statusCode).toBe(400);
    expect(badIban.body).toContain('IBAN is ongeldig');
    expect(badIban.body).not.toContain('NL91-ABNA');
    expect(await countUsers('iris@klant.nl')).toBe(0);
    const ok = await svc.app.inject({ method: 'POST', url: path, payload: { ean: b, street: 'Markt' } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('/mandates/');
    const draft = await svc.deps.db.selectFrom('partner_drafts').selectAll().where('id', '=', created.draft_id).executeTakeFirstOrThrow();
    const conn = await svc.deps.db.selectFrom('connections').selectAll().where('id', '=', draft.claimed_connection_id!).executeTakeFirstOrThrow();
    expect(conn).toMatchObject({ ean_code: b, street: 'Markt', house_number: '4', city: 'Arnhem' });
    expect(draft).toMatchObject({ ean_code: b, ean_status: 'resolved' });
  });
});
