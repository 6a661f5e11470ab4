// POST /v1/mandate-links (C2.2), the signing page over HTTP (C2.3) and the sandbox helpers (C2.6).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, aUser, bearer, type TestPartner } from '../helpers/factories.ts';
import { anAccount, aSignedMandate } from '../helpers/onboarding-factories.ts';
import { CURRENT_CLAUSE_VERSION } from '../../src/domain/mandates/index.ts';

const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;
const tokenOf = (url: string) => new URL(url).pathname.split('/').pop()!;
const hidden = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';

describe('mandate links and the signing page', () => {
  let svc: TestService;
  let partner: TestPartner;
  let other: TestPartner;
  let token: string;
  const clock = testClock('2026-11-22T10:00:00Z');

  beforeAll(async () => {
    svc = await createTestService({ clock, env: { MANDATE_LINK_TTL_DAYS: '30', OPERATOR_NAME: 'Test Operator B.V.' } });
    partner = await aPartner(svc.deps);
    other = await aPartner(svc.deps);
    token = await partner.cpoToken();
  });
  afterAll(() => svc.close());

  const link = (payload: unknown, t = token) =>
    svc.app.inject({ method: 'POST', url: '/v1/mandate-links', headers: bearer(t), payload: payload as object });
  const conn = (id: string) => svc.deps.db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const mandates = (connectionId: string) => svc.deps.db.selectFrom('mandates').selectAll().where('connection_id', '=', connectionId).execute();
  const form = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    svc.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams(fields).toString(),
    });

  it('issues a link (201) and returns the same open link idempotently (200)', async () => {
    const a = await anAccount(svc, partner);
    const res = await link({ connection_id: a.connection_id });
    expect(res.statusCode).toBe(201);
    const j = res.json();
    expect(j).toEqual({
      ok: true,
      mandate_link_id: expect.any(String),
      connection_id: a.connection_id,
      account_id: a.account_id,
      url: expect.stringMatching(new RegExp(`^${svc.deps.config.PUBLIC_BASE_URL}/mandates/[A-Za-z0-9_-]{43}$`)),
      expires_at: '2026-12-22T10:00:00Z',
      clause_version: CURRENT_CLAUSE_VERSION,
      mandate_status: 'pending',
    });
    const again = await link({ cpo_external_ref: a.cpo_external_ref });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ ...j, idempotent: true });
    // D231: the same link, in the locale asked now
    const en = await link({ cpo_external_ref: a.cpo_external_ref, locale: 'en' });
    expect(en.statusCode).toBe(200);
    expect(en.json()).toEqual({ ...j, url: `${j.url}?locale=en`, idempotent: true });
    const rows = await svc.deps.db.selectFrom('mandate_links').selectAll().where('connection_id', '=', a.connection_id).execute();
    expect(rows).toHaveLength(1);
    // the token is stored only as a hash (searchable) and encrypted (to hand back the same URL)
    expect(rows[0]!.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows[0])).not.toContain(tokenOf(j.url));
  });

  it('C2.2 errors: target_required, connection_not_found (tenancy), ambiguous_connection, connection_not_active, mandate_already_active, bad return_url', async () => {
    const a = await anAccount(svc, partner);
    expect((await link({})).json()).toEqual({ error: 'target_required', detail: expect.any(String) });
    const foreign = await link({ connection_id: a.connection_id }, await other.cpoToken());
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error).toBe('connection_not_found');
    const bad = await link({ connection_id: a.connection_id, return_url: 'http://evil.example.org/x' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('invalid_request');

    const b = await anAccount(svc, partner);
    await svc.deps.db
      .insertInto('connections')
      .values({ account_id: b.account_id, ean_code: '871999999999999990', street: 'X', house_number: '1', postal_code: '1000AA', city: 'A', ean_validation_status: 'matched' })
      .execute();
    const amb = await link({ account_id: b.account_id });
    expect(amb.statusCode).toBe(409);
    expect(amb.json().error).toBe('ambiguous_connection');

    const c = await anAccount(svc, partner);
    await svc.deps.db.updateTable('connections').set({ status: 'archived' }).where('id', '=', c.connection_id).execute();
    const archived = await link({ connection_id: c.connection_id });
    expect(archived.statusCode).toBe(409);
    expect(archived.json().error).toBe('connection_not_active');

    const d = await anAccount(svc, partner);
    await aSignedMandate(svc, d.connection_id, { partner });
    const signed = await link({ connection_id: d.connection_id });
    expect(signed.statusCode).toBe(409);
    expect(signed.json()).toEqual({ error: 'mandate_already_active', detail: expect.any(String) });
    expect(await svc.deps.db.selectFrom('mandate_links').select('id').where('connection_id', 'in', [a.connection_id, c.connection_id, d.connection_id]).execute()).toHaveLength(0);
  });

  it('the page shows clause, version, EAN, address and holder (nl default, en on request), and signing records the evidence', async () => {
    const a = await anAccount(svc, partner, { display_name: null, person: { full_name: 'Piet Klant', email: 'piet@klant-test.nl' } });
    const j = (await link({ connection_id: a.connection_id, return_url: 'https://cpo-app.test.nl/done' })).json();
    const page = await svc.app.inject({ method: 'GET', url: pathOf(j.url) });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.body).toContain('<html lang="nl">');
    expect(page.body).toContain('Machtiging ondertekenen');
    expect(page.body).toContain(a.ean_code);
    expect(page.body).toContain('Laadpaalstraat');
    expect(page.body).toContain('Test Operator B.V.');
    expect(page.body).toContain('Piet Klant');
    expect(page.body).toContain(CURRENT_CLAUSE_VERSION);
    expect(page.body).not.toMatch(/<script/i);
    const en = await svc.app.inject({ method: 'GET', url: `${pathOf(j.url)}?locale=en` });
    expect(en.body).toContain('<html lang="en">');
    expect(en.body).toContain('Sign the authorisation');
    // viewing records nothing
    expect(await mandates(a.connection_id)).toHaveLength(0);

    clock.advance(60_000);
    const res = await form(
      pathOf(j.url),
      { full_name: '  Piet Klant ', consent: 'yes', clause_sha256: hidden(page.body, 'clause_sha256'), locale: 'nl' },
      { 'user-agent': 'TestBrowser/1.0', 'x-forwarded-for': '203.0.113.9' },
    );
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('https://cpo-app.test.nl/done');
    const [m] = await mandates(a.connection_id);
    expect(m).toMatchObject({
      channel: 'signing_page',
      signatory_name: 'Piet Klant',
      signatory_email: 'piet@klant-test.nl',
      signed_at: new Date('2026-11-22T10:01:00Z'),
      clause_version: CURRENT_CLAUSE_VERSION,
      clause_sha256: hidden(page.body, 'clause_sha256'),
      locale: 'nl',
      ean_code: a.ean_code,
      user_agent: 'TestBrowser/1.0',
      status: 'active',
      mandate_link_id: j.mandate_link_id,
    });
    expect(m!.client_ip).toBeTruthy();
    expect(m!.address).toContain('Laadpaalstraat');
    expect(await conn(a.connection_id)).toMatchObject({
      mandate_status: 'active',
      registration_status: 'ingediend',
      mandate_valid_from: new Date('2026-11-22T10:01:00Z'),
    });
    // a second POST changes nothing; the page now confirms
    const again = await form(pathOf(j.url), { full_name: 'Someone Else', consent: 'yes', clause_sha256: hidden(page.body, 'clause_sha256') });
    expect(again.statusCode).toBe(200);
    expect(again.body).toContain('Machtiging ondertekend');
    expect(await mandates(a.connection_id)).toHaveLength(1);
    const list = await svc.app.inject({ method: 'GET', url: `/v1/accounts?cpo_external_ref=${a.cpo_external_ref}`, headers: bearer(token) });
    expect(list.json().accounts[0].connections[0]).toMatchObject({ mandate_status: 'active', registration_status: 'ingediend', mandate_valid_from: '2026-11-22T10:01:00Z' });
  });

  it('a form without name or consent is refused (400) and records nothing', async () => {
    const a = await anAccount(svc, partner);
    const j = (await link({ connection_id: a.connection_id, locale: 'en' })).json();
    expect(j.url).toMatch(/\?locale=en$/);
    const page = await svc.app.inject({ method: 'GET', url: pathOf(j.url) });
    expect(page.body).toContain('<html lang="en">');
    const sha = hidden(page.body, 'clause_sha256');
    const noConsent = await form(pathOf(j.url), { full_name: 'Jan', clause_sha256: sha });
    expect(noConsent.statusCode).toBe(400);
    expect(noConsent.body).toContain('id="error-consent"');
    const noName = await form(pathOf(j.url), { full_name: ' ', consent: 'yes', clause_sha256: sha });
    expect(noName.statusCode).toBe(400);
    expect(noName.body).toContain('id="error-name"');
    expect(await mandates(a.connection_id)).toHaveLength(0);
    expect((await conn(a.connection_id)).mandate_status).toBe('pending');
  });

  it('a page whose details changed after rendering is not signed (409) and records nothing', async () => {
    const a = await anAccount(svc, partner);
    const j = (await link({ connection_id: a.connection_id })).json();
    const page = await svc.app.inject({ method: 'GET', url: pathOf(j.url) });
    await svc.app.inject({ method: 'POST', url: '/v1/connections:update', headers: bearer(token), payload: { connection_id: a.connection_id, connection: { house_number: '99' } } });
    const res = await form(pathOf(j.url), { full_name: 'Jan', consent: 'yes', clause_sha256: hidden(page.body, 'clause_sha256') });
    expect(res.statusCode).toBe(409);
    expect(await mandates(a.connection_id)).toHaveLength(0);
  });

  it('an unknown or tampered token gives 404 and an expired link 410; neither records anything', async () => {
    const a = await anAccount(svc, partner);
    const j = (await link({ connection_id: a.connection_id })).json();
    const t = tokenOf(j.url);
    const tampered = t.slice(0, -1) + (t.endsWith('A') ? 'B' : 'A');
    for (const p of [`/mandates/${tampered}`, '/mandates/short', `/mandates/${t}x`]) {
      const get = await svc.app.inject({ method: 'GET', url: p });
      expect(get.statusCode).toBe(404);
      expect(get.body).toContain('id="error"');
      const post = await form(p, { full_name: 'Jan', consent: 'yes', clause_sha256: 'x' });
      expect(post.statusCode).toBe(404);
    }
    const page = await svc.app.inject({ method: 'GET', url: pathOf(j.url) });
    clock.advance(31 * 86_400_000);
    token = await partner.cpoToken(); // the earlier token expired with the clock
    const expired = await svc.app.inject({ method: 'GET', url: pathOf(j.url) });
    expect(expired.statusCode).toBe(410);
    const post = await form(pathOf(j.url), { full_name: 'Jan', consent: 'yes', clause_sha256: hidden(page.body, 'clause_sha256') });
    expect(post.statusCode).toBe(410);
    expect(await mandates(a.connection_id)).toHaveLength(0);
    expect((await conn(a.connection_id)).mandate_status).toBe('pending');
    // an expired link may be replaced by a new POST
    const fresh = await link({ connection_id: a.connection_id });
    expect(fresh.statusCode).toBe(201);
    expect(fresh.json().url).not.toBe(j.url);
    clock.set('2026-11-22T10:00:00Z');
    token = await partner.cpoToken();
  });

  it('a link of a connection archived meanwhile shows 410', async () => {
    const a = await anAccount(svc, partner);
    const j = (await link({ connection_id: a.connection_id })).json();
    await svc.deps.db.updateTable('connections').set({ status: 'archived' }).where('id', '=', a.connection_id).execute();
    const res = await svc.app.inject({ method: 'GET', url: pathOf(j.url) });
    expect(res.statusCode).toBe(410);
  });

  it('concurrent link requests for one connection yield one link', async () => {
    const a = await anAccount(svc, partner);
    const rs = await Promise.all([1, 2, 3, 4].map(() => link({ connection_id: a.connection_id })));
    expect(rs.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 201]);
    expect(new Set(rs.map((r) => r.json().url)).size).toBe(1);
    expect(await svc.deps.db.selectFrom('mandate_links').select('id').where('connection_id', '=', a.connection_id).execute()).toHaveLength(1);
  });

  describe('functions for the partner area (claim page)', () => {
    it('createConceptAccount makes a concept account + connection without a CPO partner, under the same EAN rules', async () => {
      const { createConceptAccount } = await import('../../src/domain/accounts/index.ts');
      const { anEan } = await import('../helpers/onboarding-factories.ts');
      const ean = anEan();
      const out = await createConceptAccount(svc.deps, {
        partnerId: null,
        accessChannel: 'partner_claim',
        person: { full_name: 'Claire Claim', email: 'claire@klant-test.nl' },
        connection: { ean_code: ean, street: 'Claimweg', house_number: '4', postal_code: '1234AB', city: 'Delft' },
      });
      const acc = await svc.deps.db.selectFrom('accounts').selectAll().where('id', '=', out.account_id).executeTakeFirstOrThrow();
      expect(acc).toMatchObject({ partner_id: null, access_channel: 'partner_claim', signatory_full_name: 'Claire Claim', type: 'particulier' });
      expect(await conn(out.connection_id)).toMatchObject({ account_id: out.account_id, ean_code: ean, registration_status: 'concept', mandate_status: 'pending' });
      await expect(
        createConceptAccount(svc.deps, {
          partnerId: null,
          accessChannel: 'partner_claim',
          person: { full_name: 'Other' },
          connection: { ean_code: ean, street: 'X', house_number: '1', postal_code: '1000AA', city: 'Y' },
        }),
      ).rejects.toMatchObject({ code: 'ean_in_use' });
      await expect(
        createConceptAccount(svc.deps, { partnerId: null, accessChannel: 'partner_claim', person: { full_name: 'X' }, connection: { ean_code: '1', street: 'X', house_number: '1', postal_code: '1000AA', city: 'Y' } }),
      ).rejects.toMatchObject({ code: 'invalid_ean' });
      // not a CPO-API account: not listed
      const list = await svc.app.inject({ method: 'GET', url: '/v1/accounts?limit=200', headers: bearer(token) });
      expect(list.json().accounts.some((a: { id: string }) => a.id === out.account_id)).toBe(false);

      const { issueMandateLink } = await import('../../src/domain/mandates/index.ts');
      const l1 = await issueMandateLink(svc.deps, { connectionId: out.connection_id, locale: 'en', returnUrl: 'https://partner.test.nl/claimed' });
      expect(l1).toEqual({ mandate_link_id: expect.any(String), url: expect.stringMatching(/\/mandates\/[A-Za-z0-9_-]{43}\?locale=en$/), expires_at: expect.any(String), idempotent: false });
      const l2 = await issueMandateLink(svc.deps, { connectionId: out.connection_id });
      expect(l2).toEqual({ ...l1, idempotent: true });
      const page = await svc.app.inject({ method: 'GET', url: pathOf(l1.url) });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('Claire Claim');
    });
  });

  describe('sandbox helpers (C2.6)', () => {
    it('sign-mandate with a CPO token signs the pending machtiging', async () => {
      const a = await anAccount(svc, partner);
      const res = await svc.app.inject({
        method: 'POST',
        url: `/sandbox/connections/${a.connection_id}/sign-mandate`,
        headers: bearer(token),
        payload: { full_name: 'Sandbox Signer' },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        ok: true,
        connection_id: a.connection_id,
        account_id: a.account_id,
        mandate_status: 'active',
        registration_status: 'ingediend',
        mandate_valid_from: '2026-11-22T10:00:00Z',
        clause_version: CURRENT_CLAUSE_VERSION,
      });
      expect(await mandates(a.connection_id)).toEqual([expect.objectContaining({ channel: 'sandbox_helper', signatory_name: 'Sandbox Signer', status: 'active' })]);
      const again = await svc.app.inject({ method: 'POST', url: `/sandbox/connections/${a.connection_id}/sign-mandate`, headers: bearer(token), payload: {} });
      expect(again.statusCode).toBe(409);
      expect(again.json().error).toBe('mandate_already_active');
    });

    it('sign-mandate with the sandbox partner key works on its own records only', async () => {
      const a = await anAccount(svc, partner);
      const foreign = await svc.app.inject({ method: 'POST', url: `/sandbox/connections/${a.connection_id}/sign-mandate`, headers: bearer(other.apiKey), payload: {} });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json().error).toBe('connection_not_found');
      const foreignCpo = await svc.app.inject({ method: 'POST', url: `/sandbox/connections/${a.connection_id}/sign-mandate`, headers: bearer(await other.cpoToken()) });
      expect(foreignCpo.json()).toEqual({ error: 'connection_not_found', detail: expect.any(String) });
      expect(foreignCpo.statusCode).toBe(404);
      expect((await conn(a.connection_id)).mandate_status).toBe('pending');
      const own = await svc.app.inject({ method: 'POST', url: `/sandbox/connections/${a.connection_id}/sign-mandate`, headers: bearer(partner.apiKey) });
      expect(own.statusCode).toBe(200);
      expect(await conn(a.connection_id)).toMatchObject({ mandate_status: 'active', registration_status: 'ingediend' });
      expect((await mandates(a.connection_id))[0]!.signatory_name).toBe('Jan de Vries');
    });

    it('a CPO token needs the scope of what the helper writes (D126)', async () => {
      const a = await anAccount(svc, partner);
      const readOnly = await partner.cpoToken(['cpo:accounts:read']);
      for (const [url, payload, scope] of [
        [`/sandbox/connections/${a.connection_id}/sign-mandate`, {}, 'cpo:accounts:write'],
        [`/sandbox/connections/${a.connection_id}/register-ere`, { month: '2026-10' }, 'cpo:sessions:write'],
        ['/sandbox/ean-recheck', {}, 'cpo:accounts:write'],
      ] as const) {
        const res = await svc.app.inject({ method: 'POST', url, headers: bearer(readOnly), payload });
        expect(res.statusCode, url).toBe(403);
        expect(res.json(), url).toMatchObject({ error: 'Insufficient scope', required_scope: scope });
      }
      expect((await conn(a.connection_id)).mandate_status).toBe('pending');
    });

    it('a personal token is refused', async () => {
      const u = await aUser(svc.deps);
      const res = await svc.app.inject({ method: 'POST', url: '/sandbox/ean-recheck', headers: bearer(u.token), payload: {} });
      expect(res.statusCode).toBe(401);
    });

    it('ean-recheck runs the re-check over the caller’s unverified connections only', async () => {
      const mine = await anAccount(svc, partner);
      const theirs = await anAccount(svc, other);
      await svc.deps.db.updateTable('connections').set({ ean_validation_status: 'unverified' }).where('id', 'in', [mine.connection_id, theirs.connection_id]).execute();
      const res = await svc.app.inject({ method: 'POST', url: '/sandbox/ean-recheck', headers: bearer(partner.apiKey), payload: {} });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ok: true, checked: 1, matched: 1, mismatched: 0, unverified: 0, failed: 0 });
      expect((await conn(mine.connection_id)).ean_validation_status).toBe('matched');
      expect((await conn(theirs.connection_id)).ean_validation_status).toBe('unverified');
    });
  });
});
