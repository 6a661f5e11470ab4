// D241 (the outside accessibility audit, findings 4 and 10): on the signing page and the claim page a form error is
// tied to its field (aria-invalid, aria-describedby naming the message, besides an existing hint), announced
// (role="alert"), the page's title says there is an error, what the customer typed comes back; the link to the other
// language is marked as that language (lang and hreflang). Over HTTP: the HTML as served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { anAccount } from '../helpers/onboarding-factories.ts';
import { anEan, postCustomers, registerEans } from '../helpers/partner-factories.ts';

let svc: TestService;
let partner: TestPartner;

beforeAll(async () => {
  svc = await createTestService();
  partner = await aPartner(svc.deps, { name: 'Zonnig Laden BV' });
});
afterAll(async () => svc?.close());

const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;
const post = (url: string, fields: Record<string, string>) =>
  svc.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(fields).toString() });
/** the opening tag of the element with this id */
const tag = (html: string, id: string): string => {
  const m = new RegExp(`<[a-z]+ [^>]*\\bid="${id}"[^>]*>`).exec(html);
  if (!m) throw new Error(`no element #${id}`);
  return m[0];
};
/** an attribute's value, null when absent ('' for a bare attribute such as checked) */
const attr = (openingTag: string, name: string): string | null => {
  const m = new RegExp(`\\s${name}(?:="([^"]*)")?(?=[\\s>])`).exec(openingTag);
  return m ? (m[1] ?? '') : null;
};
const title = (html: string) => /<title>([^<]*)<\/title>/.exec(html)?.[1];
/** the link to the other language */
const langLink = (html: string) => /<a [^>]*>(?:English|Nederlands)<\/a>/.exec(html)?.[0] ?? '';

describe('D241: the signing page', () => {
  const linkFor = async (locale: 'nl' | 'en') => {
    const a = await anAccount(svc, partner);
    const res = await svc.app.inject({ method: 'POST', url: '/v1/mandate-links', headers: bearer(await partner.cpoToken()), payload: { connection_id: a.connection_id, locale } });
    expect(res.statusCode).toBe(201);
    const url = pathOf(res.json().url);
    const page = await svc.app.inject({ method: 'GET', url });
    const sha = /name="clause_sha256" value="([^"]*)"/.exec(page.body)![1]!;
    return { url, page: page.body, sha };
  };

  it('ties a missing name to its field, announces it, says "Fout:" in the title and keeps the ticked consent', async () => {
    const { url, page, sha } = await linkFor('nl');
    expect(title(page)).toBe('Machtiging ondertekenen');
    expect(attr(tag(page, 'full_name'), 'aria-invalid')).toBeNull();

    const res = await post(url, { full_name: ' ', consent: 'yes', clause_sha256: sha, locale: 'nl' });
    expect(res.statusCode).toBe(400);
    expect(title(res.body)).toBe('Fout: Machtiging ondertekenen');
    expect(res.body).toContain('<h1>Machtiging ondertekenen</h1>');
    const name = tag(res.body, 'full_name');
    expect(attr(name, 'aria-invalid')).toBe('true');
    expect(attr(name, 'aria-describedby')).toBe('error-name');
    expect(attr(name, 'autofocus')).toBe(''); // D248: the field in error has the focus
    expect(attr(tag(res.body, 'error-name'), 'role')).toBe('alert');
    // consent was given: not in error, and still ticked
    const consent = tag(res.body, 'consent');
    expect(attr(consent, 'aria-invalid')).toBeNull();
    expect(attr(consent, 'checked')).toBe('');
    expect(attr(consent, 'autofocus')).toBeNull();
  });

  it('ties a missing consent to the box and keeps the typed name (English: "Error:")', async () => {
    const { url, sha } = await linkFor('en');
    const res = await post(url, { full_name: 'Jan de Tiepfout', clause_sha256: sha, locale: 'en' });
    expect(res.statusCode).toBe(400);
    expect(title(res.body)).toBe('Error: Sign the authorisation');
    const consent = tag(res.body, 'consent');
    expect(attr(consent, 'aria-invalid')).toBe('true');
    expect(attr(consent, 'aria-describedby')).toBe('error-consent');
    expect(attr(consent, 'checked')).toBeNull();
    expect(attr(tag(res.body, 'error-consent'), 'role')).toBe('alert');
    const name = tag(res.body, 'full_name');
    expect(attr(name, 'value')).toBe('Jan de Tiepfout');
    expect(attr(name, 'aria-invalid')).toBeNull();
    expect(attr(name, 'aria-describedby')).toBeNull();
  });

  it('marks the link to the other language with its language', async () => {
    const nl = await linkFor('nl');
    expect(attr(langLink(nl.page), 'lang')).toBe('en');
    expect(attr(langLink(nl.page), 'hreflang')).toBe('en');
    const en = await linkFor('en');
    expect(attr(langLink(en.page), 'lang')).toBe('nl');
    expect(attr(langLink(en.page), 'hreflang')).toBe('nl');
  });
});

describe('D241: the claim page', () => {
  const draftFor = async (customer: Record<string, unknown>) => {
    const res = await postCustomers(svc, partner.apiKey, { consent: true, send_invite: false, customers: [customer] });
    expect(res.statusCode).toBe(200);
    return new URL(res.json().created[0].claim_url).pathname;
  };

  it('a bad IBAN: the field is invalid and described by the error and its hint, the title says so, the rest comes back', async () => {
    const ean = anEan();
    await registerEans(svc.deps, [{ ean_code: ean, postal_code: '1017CT', house_number: '30' }]);
    const url = await draftFor({ name: 'Iban Fout', email: 'iban-fout@klant.nl', postal_code: '1017CT', house_number: '30', city: 'Amsterdam' });
    const page = await svc.app.inject({ method: 'GET', url });
    expect(title(page.body)).toBe('Uw aanmelding bevestigen');
    expect(attr(tag(page.body, 'iban'), 'aria-describedby')).toBe('iban-hint');
    expect(attr(tag(page.body, 'iban'), 'aria-invalid')).toBeNull();

    const res = await post(url, { street: 'Herengracht', city: 'Amsterdam', iban: 'NL91-ABNA', locale: 'nl' });
    expect(res.statusCode).toBe(400);
    expect(title(res.body)).toBe('Fout: Uw aanmelding bevestigen');
    expect(res.body).toContain('<h1>Uw aanmelding bevestigen</h1>');
    expect(attr(tag(res.body, 'error'), 'role')).toBe('alert');
    const iban = tag(res.body, 'iban');
    expect(attr(iban, 'aria-invalid')).toBe('true');
    expect(attr(iban, 'aria-describedby')).toBe('error iban-hint');
    expect(attr(iban, 'autofocus')).toBe(''); // D248: the field in error has the focus
    expect(attr(tag(res.body, 'street'), 'autofocus')).toBeNull();
    expect(attr(iban, 'value')).toBe(''); // the IBAN is never echoed
    expect(attr(tag(res.body, 'street'), 'value')).toBe('Herengracht');
    expect(attr(tag(res.body, 'street'), 'aria-invalid')).toBeNull();
  });

  it('an address error marks the field it is about; English says "Error:"', async () => {
    const url = await draftFor({ name: 'Adres Fout', email: 'adres-fout@klant.nl', company_name: 'Fout BV', type: 'zakelijk', kvk: '12345678' });
    const bad = await post(`${url}?locale=en`, { postal_code: '3511 SA', house_number: '7B', street: 'Oudegracht', city: 'Utrecht', iban: 'NL91ABNA0417164300', locale: 'en' });
    expect(bad.statusCode).toBe(400);
    expect(title(bad.body)).toBe('Error: Confirm your registration');
    expect(attr(tag(bad.body, 'postal_code'), 'aria-invalid')).toBe('true');
    expect(attr(tag(bad.body, 'postal_code'), 'aria-describedby')).toBe('error');
    expect(attr(tag(bad.body, 'postal_code'), 'value')).toBe('3511 SA');
    expect(attr(tag(bad.body, 'house_number'), 'aria-invalid')).toBeNull();
    expect(attr(tag(bad.body, 'house_number'), 'value')).toBe('7B');

    // the address incomplete: the empty field is the one marked
    const empty = await post(url, { postal_code: '3511AB', house_number: '', street: 'Oudegracht', city: 'Utrecht', iban: 'NL91ABNA0417164300' });
    expect(empty.statusCode).toBe(400);
    expect(attr(tag(empty.body, 'house_number'), 'aria-invalid')).toBe('true');
    expect(attr(tag(empty.body, 'postal_code'), 'aria-invalid')).toBeNull();
    expect(attr(tag(empty.body, 'street'), 'aria-invalid')).toBeNull();
  });

  it('a mistyped EAN comes back in its field, marked invalid', async () => {
    // an address where the register has no EAN: the page asks for it
    const url = await draftFor({ name: 'Ean Fout', email: 'ean-fout@klant.nl', postal_code: '9999ZZ', house_number: '1', city: 'Nergens' });
    const res = await post(url, { street: 'Dorpsstraat', city: 'Nergens', ean: '87168590001234', iban: 'NL91ABNA0417164300' });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Deze EAN-code is ongeldig');
    const ean = tag(res.body, 'ean');
    expect(attr(ean, 'value')).toBe('87168590001234');
    expect(attr(ean, 'aria-invalid')).toBe('true');
    expect(attr(ean, 'aria-describedby')).toBe('error');
  });

  it('marks the link to the other language with its language, and after an error it keeps the confirmation code', async () => {
    const url = await draftFor({ name: 'Taal', email: 'taal@klant.nl' });
    const nl = await svc.app.inject({ method: 'GET', url });
    expect(attr(langLink(nl.body), 'lang')).toBe('en');
    expect(attr(langLink(nl.body), 'hreflang')).toBe('en');
    const en = await svc.app.inject({ method: 'GET', url: `${url}?locale=en` });
    expect(attr(langLink(en.body), 'lang')).toBe('nl');
    // D129's code of the e-mailed link goes with the switch, also on the page with an error
    const bad = await post(`${url}?locale=en`, { iban: 'x', confirm: 'code-123', locale: 'en' });
    expect(bad.statusCode).toBe(400);
    expect(attr(langLink(bad.body), 'href')).toBe(`${url}?locale=nl&amp;confirm=code-123`);
  });
});
