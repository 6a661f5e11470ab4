// C7.3 and issue 14 items 4–5 by inject: the operator's footer on every page (signing, claim, unsubscribe, 404/410)
// and in every e-mail; times in Europe/Amsterdam with the zone named; no "B.V.." anywhere; the English claim page
// translates every value; the next step is told honestly (never "nothing more to do" while unsigned).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { anAccount } from '../helpers/onboarding-factories.ts';
import { anEan, postCustomers, registerEans, tokenOf } from '../helpers/partner-factories.ts';
import { humanAmsterdam } from '../../src/lib/amsterdam-time.ts';
import { endSentence, operatorOf } from '../../src/lib/operator.ts';
import { testConfig } from '../helpers/app.ts';

let svc: TestService;
let partner: TestPartner;
const clock = testClock('2026-11-22T10:00:00Z');

beforeAll(async () => {
  svc = await createTestService({ clock });
  partner = await aPartner(svc.deps, { name: 'Zonnig Laden B.V.' });
});
afterAll(() => svc?.close());

/** the sandbox's demo identity, in the footer of every page */
function expectFooter(html: string) {
  const footer = /<footer id="operator">([\s\S]*?)<\/footer>/.exec(html)?.[1];
  expect(footer, 'the page has the operator footer').toBeDefined();
  expect(footer).toContain('ERE Gateway B.V.');
  expect(footer).toContain('Voorbeeldkade 1, 1011 AB Amsterdam');
  expect(footer).toContain('12345678');
  expect(footer).toContain('href="mailto:support@ere-gateway.example"');
  expect(footer).toContain('href="https://ere-gateway.example/privacy"');
  expect(html).not.toMatch(/[A-Za-z]\.\.(?!\.)/);
}

async function signingLink(locale: 'nl' | 'en' = 'nl'): Promise<{ path: string; connectionId: string }> {
  const a = await anAccount(svc, partner);
  const res = await svc.app.inject({ method: 'POST', url: '/v1/mandate-links', headers: bearer(await partner.cpoToken()), payload: { connection_id: a.connection_id, locale } });
  expect(res.statusCode).toBe(201);
  return { path: new URL(res.json().url).pathname, connectionId: a.connection_id };
}

async function aDraft(customer: Record<string, unknown>, sendInvite = false) {
  const res = await postCustomers(svc, partner.apiKey, { consent: true, send_invite: sendInvite, customers: [customer] });
  expect(res.statusCode).toBe(200);
  return res.json().created[0] as { claim_url: string; draft_id: string };
}

describe('signing page', () => {
  it('has the footer, the expiry in Amsterdam time with the zone, and a clause without a double dot', async () => {
    const { path } = await signingLink();
    const page = await svc.app.inject({ method: 'GET', url: path });
    expect(page.statusCode).toBe(200);
    expectFooter(page.body);
    // 30 days after 2026-11-22T10:00Z: 22 December 2026, 11:00 in Amsterdam (winter time)
    expect(page.body).toContain('Deze link is geldig tot 22 december 2026, 11:00 (CET, Europe/Amsterdam)');
    expect(page.body).not.toContain('UTC');
    expect(page.body).toContain('intrekken bij ERE Gateway B.V.</div>');

    const sha = /name="clause_sha256" value="([0-9a-f]+)"/.exec(page.body)![1]!;
    const signed = await svc.app.inject({ method: 'POST', url: path, payload: { full_name: 'Anna de Wit', consent: 'yes', clause_sha256: sha } });
    expect(signed.statusCode).toBe(200);
    expect(signed.body).toContain('De machtiging is ondertekend op 22 november 2026, 11:00 (CET, Europe/Amsterdam).');
    expectFooter(signed.body);
  });

  it('English: the zone is named too; summer time reads CEST', async () => {
    const { path } = await signingLink('en');
    const page = await svc.app.inject({ method: 'GET', url: path });
    expect(page.body).toContain('This link is valid until 22 December 2026, 11:00 (CET, Europe/Amsterdam)');
    expect(page.body).toContain('with ERE Gateway B.V.</div>');
    expectFooter(page.body);
    expect(humanAmsterdam(new Date('2026-07-01T10:00:00Z'), 'en')).toBe('1 July 2026, 12:00 (CEST, Europe/Amsterdam)');
  });

  it('the 404 and 410 pages carry the footer', async () => {
    const r404 = await svc.app.inject({ method: 'GET', url: '/mandates/not-a-real-token' });
    expect(r404.statusCode).toBe(404);
    expectFooter(r404.body);
    const { path } = await signingLink();
    clock.advance(31 * 86_400_000);
    try {
      const r410 = await svc.app.inject({ method: 'GET', url: path });
      expect(r410.statusCode).toBe(410);
      expectFooter(r410.body);
    } finally {
      clock.set('2026-11-22T10:00:00Z');
    }
  });
});

describe('claim page', () => {
  it('English: every value translated, the intro without a double dot, the footer; 404 and 410 too', async () => {
    const ean = anEan();
    await registerEans(svc.deps, [{ ean_code: ean, postal_code: '1017CT', house_number: '40' }]);
    const d = await aDraft({ name: 'Bram', email: 'bram@klant-test.nl', type: 'zakelijk', company_name: 'Bram BV', kvk: '87654321', postal_code: '1017CT', house_number: '40', city: 'Amsterdam' });
    const path = `/claim/${tokenOf(d.claim_url)}`;
    const en = await svc.app.inject({ method: 'GET', url: `${path}?locale=en` });
    expect(en.statusCode).toBe(200);
    expect(en.body).toContain('<dd id="draft-type">business</dd>');
    expect(en.body).not.toMatch(/zakelijk|particulier/);
    expect(en.body).toContain('Zonnig Laden B.V. pre-registered you with ERE Gateway B.V. Check your details');
    expectFooter(en.body);
    const nl = await svc.app.inject({ method: 'GET', url: path });
    expect(nl.body).toContain('<dd id="draft-type">zakelijk</dd>');
    expect(nl.body).toContain('heeft u aangemeld bij ERE Gateway B.V. Controleer');
    expectFooter(nl.body);

    const done = await svc.app.inject({ method: 'POST', url: `${path}?locale=en`, payload: { street: 'Herengracht' } });
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('id="next-sign"');
    expect(done.body).toContain('not signed yet');
    expect(done.body).not.toMatch(/Nothing else is needed|niets meer te doen/);
    expectFooter(done.body);
    const signHref = /id="sign" href="([^"]+)"/.exec(done.body)![1]!;

    // opened again while unsigned: 410, "not signed yet" with the same link, in this page's language (D231)
    const again = await svc.app.inject({ method: 'GET', url: path });
    expect(again.statusCode).toBe(410);
    expect(again.body).toContain('De machtiging is nog niet ondertekend.');
    expect(again.body).toContain(`href="${signHref.replace('?locale=en', '?locale=nl')}"`);
    expect(again.body).not.toContain('niets meer te doen');
    expectFooter(again.body);

    // signed: now, and only now, nothing more to do
    const sign = await svc.app.inject({ method: 'GET', url: new URL(signHref).pathname });
    const sha = /name="clause_sha256" value="([0-9a-f]+)"/.exec(sign.body)![1]!;
    await svc.app.inject({ method: 'POST', url: new URL(signHref).pathname, payload: { full_name: 'Bram', consent: 'yes', clause_sha256: sha } });
    const after = await svc.app.inject({ method: 'GET', url: `${path}?locale=en` });
    expect(after.statusCode).toBe(410);
    expect(after.body).toContain('id="next-signed"');
    expect(after.body).toContain('The authorisation is signed. Nothing else is needed.');

    const r404 = await svc.app.inject({ method: 'GET', url: '/claim/unknown-token' });
    expect(r404.statusCode).toBe(404);
    expectFooter(r404.body);
  });

  it('a draft without an address asks for it; a bad postal code or house number is refused; no EAN in the register → asks for it', async () => {
    const d = await aDraft({ name: 'Sara', email: 'sara@klant-test.nl', type: 'zakelijk', company_name: 'Sara BV', kvk: '11223344' });
    const path = `/claim/${tokenOf(d.claim_url)}`;
    const form = await svc.app.inject({ method: 'GET', url: path });
    expect(form.body).toContain('id="ask-address"');
    for (const [name] of [['postal_code'], ['house_number'], ['street'], ['city'], ['ean']]) expect(form.body).toContain(`name="${name}"`);
    const post = (payload: Record<string, string>) => svc.app.inject({ method: 'POST', url: path, payload });
    const empty = await post({});
    expect(empty.statusCode).toBe(400);
    expect(empty.body).toContain('Vul het adres volledig in.');
    const badPc = await post({ postal_code: '0123 AB', house_number: '5', street: 'Markt', city: 'Gouda' });
    expect(badPc.body).toContain('Deze postcode is ongeldig');
    expect(badPc.body).toContain('value="5"'); // what was typed stays
    const badNo = await post({ postal_code: '2801 JK', house_number: '5 toolongaddition', street: 'Markt', city: 'Gouda' });
    expect(badNo.body).toContain('Dit huisnummer is ongeldig');
    const noEan = await post({ postal_code: '2801 JK', house_number: '5', street: 'Markt', city: 'Gouda' });
    expect(noEan.statusCode).toBe(400);
    expect(noEan.body).toContain('Vul uw EAN-code in');
    const ean = anEan();
    const ok = await post({ postal_code: '2801 JK', house_number: '5', street: 'Markt', city: 'Gouda', ean });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('id="next-sign"');
    const conn = await svc.deps.db.selectFrom('connections').selectAll().where('ean_code', '=', ean).executeTakeFirstOrThrow();
    expect(conn).toMatchObject({ postal_code: '2801 JK', house_number: '5', street: 'Markt', city: 'Gouda' });
  });

  it('several EANs at the address the customer entered: a choice among them', async () => {
    const [a, b] = [anEan(), anEan()];
    await registerEans(svc.deps, [
      { ean_code: a, postal_code: '9711AA', house_number: '3', house_number_addition: null },
      { ean_code: b, postal_code: '9711AA', house_number: '3', house_number_addition: null },
    ]);
    const d = await aDraft({ name: 'Joost', email: 'joost@klant-test.nl' });
    const path = `/claim/${tokenOf(d.claim_url)}`;
    const pick = await svc.app.inject({ method: 'POST', url: path, payload: { postal_code: '9711AA', house_number: '3', street: 'Vismarkt', city: 'Groningen' } });
    expect(pick.statusCode).toBe(400);
    expect(pick.body).toContain(`<option value="${a}">`);
    expect(pick.body).toContain(`<option value="${b}">`);
    const ok = await svc.app.inject({ method: 'POST', url: path, payload: { postal_code: '9711AA', house_number: '3', street: 'Vismarkt', city: 'Groningen', ean: b } });
    expect(ok.statusCode).toBe(200);
  });

  it('the unsubscribe page carries the footer', async () => {
    const r = await svc.app.inject({ method: 'GET', url: '/unsubscribe/unknown' });
    expect(r.statusCode).toBe(404);
    expectFooter(r.body);
  });
});

describe('e-mail', () => {
  it('the invite carries the operator footer and no double dot', async () => {
    await aDraft({ name: 'Noor', email: 'noor@klant-test.nl' }, true);
    const row = await svc.deps.db.selectFrom('outbox_messages').selectAll().where('to_email', '=', 'noor@klant-test.nl').executeTakeFirstOrThrow();
    expect(row.body).toContain('Zonnig Laden B.V. pre-registered you with ERE Gateway B.V. Review');
    expect(row.body).not.toMatch(/[A-Za-z]\.\.(?!\.)/);
    expect(row.body).toMatch(/\n-- \nERE Gateway B\.V\., Voorbeeldkade 1, 1011 AB Amsterdam, KvK 12345678\nVragen \/ Questions: support@ere-gateway\.example\nPrivacyverklaring \/ Privacy statement: https:\/\/ere-gateway\.example\/privacy$/);
  });
});

describe('operator identity from the configuration', () => {
  it('configured values win; production shows no demo value; one period ends a sentence', () => {
    const set = operatorOf(testConfig({ OPERATOR_NAME: 'Laadkrediet B.V.', OPERATOR_ADDRESS: 'Stationsplein 1, 3511 ED Utrecht', OPERATOR_KVK: '76543210', OPERATOR_SUPPORT_EMAIL: 'hulp@laadkrediet.nl', OPERATOR_PRIVACY_URL: 'https://laadkrediet.nl/privacy' }));
    expect(set).toEqual({ name: 'Laadkrediet B.V.', address: 'Stationsplein 1, 3511 ED Utrecht', kvk: '76543210', supportEmail: 'hulp@laadkrediet.nl', privacyUrl: 'https://laadkrediet.nl/privacy' });
    // production refuses to start without all five (D187); operatorOf still never fills in a demo value there
    const bare = { ...testConfig({ APP_ENV: 'production' }), OPERATOR_ADDRESS: undefined, OPERATOR_KVK: undefined, OPERATOR_SUPPORT_EMAIL: undefined, OPERATOR_PRIVACY_URL: undefined };
    expect(operatorOf(bare)).toEqual({ name: 'Laadstroom B.V.', address: null, kvk: null, supportEmail: null, privacyUrl: null });
    expect(() => testConfig({ OPERATOR_KVK: '1234' })).toThrow(/OPERATOR_KVK/);
    expect(endSentence('ERE Gateway B.V.')).toBe('ERE Gateway B.V.');
    expect(endSentence('Laadkrediet BV')).toBe('Laadkrediet BV.');
  });
});
