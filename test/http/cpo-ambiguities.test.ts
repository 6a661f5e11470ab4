// D231: where the specification reads two ways, what the CPO API does. A3: a repeated POST /v1/mandate-links hands
// back the open link with what the repeat asks applied (its locale in the address, its return_url on the link).
// A4: an empty or blank cpo_external_ref filter is a 400 invalid_request naming the parameter on every list that
// takes it. (A1 and A2 are documented rules that the existing tests cover: the sandbox's EAN checks, the credentials
// of the Personal API.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { anAccount } from '../helpers/onboarding-factories.ts';

const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;
const hidden = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';

describe('D231: the CPO API where the specification reads two ways', () => {
  let svc: TestService;
  let partner: TestPartner;
  let token: string;

  beforeAll(async () => {
    svc = await createTestService({ clock: testClock('2026-11-22T10:00:00Z') });
    partner = await aPartner(svc.deps);
    token = await partner.cpoToken();
  });
  afterAll(() => svc?.close());

  const link = (payload: object) => svc.app.inject({ method: 'POST', url: '/v1/mandate-links', headers: bearer(token), payload });
  const page = (url: string) => svc.app.inject({ method: 'GET', url: pathOf(url) });
  /** the customer signs through the page at `url`: where does it send them? */
  const sign = async (url: string) => {
    const form = await page(url);
    const res = await svc.app.inject({
      method: 'POST',
      url: pathOf(url),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ full_name: 'Jan de Vries', consent: 'yes', clause_sha256: hidden(form.body, 'clause_sha256') }).toString(),
    });
    expect(res.statusCode, res.body).toBe(303);
    return res.headers.location;
  };

  it('A3: a repeat in another locale gets the same link in that language, the first address keeps its own', async () => {
    const a = await anAccount(svc, partner);
    const first = (await link({ account_id: a.account_id })).json();
    const en = await link({ account_id: a.account_id, locale: 'en' });
    expect(en.statusCode).toBe(200);
    expect(en.json()).toEqual({ ...first, url: `${first.url}?locale=en`, idempotent: true });
    expect((await page(en.json().url)).body).toContain('<html lang="en">');
    expect((await page(first.url)).body).toContain('<html lang="nl">');
    // a repeat that names no locale is the first answer again
    expect((await link({ account_id: a.account_id })).json()).toEqual({ ...first, idempotent: true });

    const b = await anAccount(svc, partner);
    const english = (await link({ account_id: b.account_id, locale: 'en' })).json();
    const dutch = (await link({ account_id: b.account_id, locale: 'nl' })).json();
    expect(dutch.url).toBe(english.url.replace('?locale=en', '?locale=nl'));
    expect((await page(dutch.url)).body).toContain('<html lang="nl">');
  });

  it('A3: a repeat with a return_url sets where the page sends the customer; one without keeps it', async () => {
    const a = await anAccount(svc, partner);
    const first = (await link({ connection_id: a.connection_id, return_url: 'https://cpo-app.test.nl/old' })).json();
    const moved = await link({ connection_id: a.connection_id, return_url: 'https://cpo-app.test.nl/new' });
    expect(moved.json()).toEqual({ ...first, idempotent: true });
    expect((await link({ connection_id: a.connection_id, locale: 'en' })).statusCode).toBe(200);
    // the customer signs through the address of the first answer
    expect(await sign(first.url)).toBe('https://cpo-app.test.nl/new');
  });

  it('A3: a repeat with a return_url the rules refuse is a 400 and leaves the link as it was', async () => {
    const a = await anAccount(svc, partner);
    const first = (await link({ connection_id: a.connection_id, return_url: 'https://cpo-app.test.nl/done' })).json();
    const bad = await link({ connection_id: a.connection_id, return_url: 'http://evil.example.org/x' });
    expect(bad.statusCode).toBe(400);
    expect(await sign(first.url)).toBe('https://cpo-app.test.nl/done');
  });

  it.each(['/v1/accounts', '/v1/ere-positions'])('A4: %s with an empty or blank cpo_external_ref is 400 invalid_request naming it', async (path) => {
    const a = await anAccount(svc, partner);
    for (const q of ['cpo_external_ref=', 'cpo_external_ref=%20%20', 'limit=5&cpo_external_ref=']) {
      const res = await svc.app.inject({ method: 'GET', url: `${path}?${q}`, headers: bearer(token) });
      expect(res.statusCode, q).toBe(400);
      expect(res.json()).toEqual({ error: 'invalid_request', detail: expect.stringMatching(/^querystring\.cpo_external_ref: must not be empty/) });
    }
    const one = await svc.app.inject({ method: 'GET', url: `${path}?cpo_external_ref=${encodeURIComponent(a.cpo_external_ref)}`, headers: bearer(token) });
    expect(one.statusCode).toBe(200);
    expect(one.json().count).toBe(1);
    const all = await svc.app.inject({ method: 'GET', url: path, headers: bearer(token) });
    expect(all.json().count).toBeGreaterThanOrEqual(1);
  });
});
