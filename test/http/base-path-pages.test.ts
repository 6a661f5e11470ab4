// D212: the service behind a proxy at a path (PUBLIC_BASE_URL=https://example.nl/ere, the proxy strips /ere). Every
// form, link, stylesheet, script and redirect of the HTML pages (claim, unsubscribe, signing, dashboard) must stay
// under /ere as the browser resolves it against the page's own URL; at the root the same pages post where they did.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, aUser, bearer, type TestPartner } from '../helpers/factories.ts';
import { anAccount } from '../helpers/onboarding-factories.ts';
import { anAccountWithConnection } from '../helpers/energy-factories.ts';
import { anOcppCharger } from '../helpers/ocpp-factories.ts';
import { postCustomers, tokenOf } from '../helpers/partner-factories.ts';

const clock = testClock('2026-11-22T10:00:00Z');
const ORIGIN = 'https://example.nl';

type Jar = Map<string, string>;
const unesc = (s: string) => s.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>');
const attrs = (html: string, name: 'action' | 'href' | 'src') => [...html.matchAll(new RegExp(`\\s${name}="([^"]*)"`, 'g'))].map((m) => unesc(m[1]!));
const formPost = (url: string, form: Record<string, string>) => ({
  method: 'POST' as const,
  url,
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  payload: new URLSearchParams(form).toString(),
});
const csrfIn = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

for (const prefix of ['/ere', '']) {
  describe(prefix ? `under a path prefix (${ORIGIN}${prefix})` : `at the root (${ORIGIN})`, () => {
    const base = `${ORIGIN}${prefix}`;
    let svc: TestService;
    let partner: TestPartner;

    beforeAll(async () => {
      svc = await createTestService({ clock, env: { PUBLIC_BASE_URL: base } });
      partner = await aPartner(svc.deps, { name: 'Zonnig Laden B.V.' });
    });
    afterAll(() => svc?.close());

    /** where the browser sends a URL of a page it got at `path` (the service's own path; the proxy adds the prefix) */
    const resolved = (url: string, path: string) => new URL(url, `${base}${path}`).href;
    /** what the browser must reach for a path of the service */
    const at = (path: string) => `${base}${path}`;

    /**
     * Every URL of the page that stays on the service's origin lies under the prefix (the operator's privacy page and
     * mailto: leave it, as they should); the page's forms post to exactly `actions` (paths of the service).
     */
    function expectPage(html: string, path: string, actions: string[]): void {
      const all = [...attrs(html, 'action'), ...attrs(html, 'href'), ...attrs(html, 'src')].map((u) => resolved(u, path));
      expect(all.length).toBeGreaterThan(0);
      for (const u of all.filter((x) => x.startsWith(`${ORIGIN}/`))) expect(u.startsWith(`${base}/`), `${u} on ${path}`).toBe(true);
      expect(attrs(html, 'action').map((a) => resolved(a, path)).sort()).toEqual(actions.map(at).sort());
    }

    async function get(jar: Jar, url: string) {
      const res = await svc.app.inject({ method: 'GET', url, headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } });
      keep(jar, res.headers['set-cookie']);
      return res;
    }
    async function post(jar: Jar, url: string, form: Record<string, string>) {
      const res = await svc.app.inject({
        method: 'POST',
        url,
        headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; '), 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(form).toString(),
      });
      keep(jar, res.headers['set-cookie']);
      return res;
    }
    /** keeps the cookies a browser at `${base}/dashboard` would keep: only those whose Path covers it */
    function keep(jar: Jar, setCookie: string | string[] | undefined): void {
      for (const c of [setCookie ?? []].flat()) {
        const [pair] = c.split(';');
        const [k, v] = pair!.split('=');
        const cookiePath = /;\s*Path=([^;]*)/i.exec(c)?.[1] ?? '/';
        const covers = `${prefix}/dashboard` === cookiePath || `${prefix}/dashboard`.startsWith(cookiePath.endsWith('/') ? cookiePath : `${cookiePath}/`);
        if (!covers) continue;
        if (v === '' || /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(c)) jar.delete(k!);
        else jar.set(k!, v!);
      }
    }
    /** the service's path of a link it handed out (under PUBLIC_BASE_URL) */
    const servicePath = (link: string) => {
      expect(link.startsWith(`${base}/`), link).toBe(true);
      return link.slice(base.length);
    };

    it('the claim page posts its form (and its error page) under the prefix', async () => {
      const res = await postCustomers(svc, partner.apiKey, {
        consent: true,
        send_invite: true,
        customers: [{ name: 'Sanne de Vries', email: `sanne-${prefix.length}@klant.nl`, postal_code: '1017 CT', house_number: '20', city: 'Amsterdam' }],
      });
      expect(res.statusCode).toBe(200);
      const created = res.json().created[0] as { claim_url: string; draft_id: string };
      const path = servicePath(created.claim_url);
      const token = tokenOf(created.claim_url);
      const page = await svc.app.inject({ method: 'GET', url: path });
      expect(page.statusCode).toBe(200);
      expectPage(page.body, path, [`/claim/${token}?locale=nl`]);
      expect(attrs(page.body, 'href').map((h) => resolved(h, path))).toContain(at(`/claim/${token}?locale=en`));

      const wrong = await svc.app.inject(formPost(`${path}?locale=en`, { locale: 'en', iban: 'not an iban' }));
      expect(wrong.statusCode).toBeGreaterThanOrEqual(400);
      expectPage(wrong.body, `${path}?locale=en`, [`/claim/${token}?locale=en`]);

      // the invite's unsubscribe page
      const msg = await svc.deps.db.selectFrom('outbox_messages').select('unsubscribe_token').where('draft_id', '=', created.draft_id).executeTakeFirstOrThrow();
      const unsub = `/unsubscribe/${msg.unsubscribe_token}`;
      const form = await svc.app.inject({ method: 'GET', url: unsub });
      expect(form.statusCode).toBe(200);
      expectPage(form.body, unsub, [`${unsub}?locale=nl`]);
    });

    it('the signing page posts its form, and its error page, under the prefix', async () => {
      const a = await anAccount(svc, partner);
      const link = await svc.app.inject({ method: 'POST', url: '/v1/mandate-links', headers: bearer(await partner.cpoToken()), payload: { connection_id: a.connection_id } });
      expect(link.statusCode).toBe(201);
      const path = servicePath(link.json().url);
      const page = await svc.app.inject({ method: 'GET', url: path });
      expect(page.statusCode).toBe(200);
      expectPage(page.body, path, [`${path}?locale=nl`]);
      const unsigned = await svc.app.inject(formPost(`${path}?locale=nl`, { full_name: '' }));
      expect(unsigned.statusCode).toBe(400);
      expectPage(unsigned.body, `${path}?locale=nl`, [`${path}?locale=nl`]);
    });

    it('the dashboard: sign-in, its cookie path and redirects, every form and file, the script\'s URLs', async () => {
      const user = await aUser(svc.deps);
      const acc = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId });
      await svc.deps.db.updateTable('accounts').set({ iban_encrypted: null }).where('id', '=', acc.accountId).execute();
      const charger = await anOcppCharger(svc, user, { nickname: 'Oprit' });
      const session = await svc.deps.db
        .insertInto('charging_sessions')
        .values({ charger_id: charger.chargerId, transaction_id: 'base-path-1', id_tag: null, started_at: clock(), ended_at: null, meter_start_wh: '0', meter_stop_wh: null, last_meter_wh: null, last_reading_at: null, energy_wh: '0', status: 'active', stop_reason: null })
        .returning('id')
        .executeTakeFirstOrThrow();

      const jar: Jar = new Map();
      const signIn = await get(jar, '/dashboard');
      expect(signIn.statusCode).toBe(200);
      expectPage(signIn.body, '/dashboard', ['/dashboard/sign-in?locale=nl']);
      expect(attrs(signIn.body, 'src').map((s) => resolved(s, '/dashboard'))).toEqual([at('/dashboard/assets/dashboard.js')]);
      expect(jar.has('ere_dash_csrf'), 'the sign-in form\'s cookie reaches the dashboard\'s path').toBe(true);

      const sent = await post(jar, '/dashboard/sign-in?locale=nl', { email: user.email, _csrf: csrfIn(signIn.body) });
      expect(sent.statusCode).toBe(200);
      const mailed = attrs(sent.body, 'href').find((h) => h.includes('/dashboard/sign-in/'))!; // the sandbox shows the link
      const confirmPath = servicePath(mailed);
      const token = /\/dashboard\/sign-in\/([^?]+)/.exec(confirmPath)![1]!;
      const confirm = await get(jar, confirmPath);
      expectPage(confirm.body, confirmPath, [`/dashboard/sign-in/${token}?locale=nl`]);
      const signedIn = await post(jar, `/dashboard/sign-in/${token}?locale=nl`, { _csrf: csrfIn(confirm.body) });
      expect(signedIn.statusCode).toBe(303);
      expect(resolved(String(signedIn.headers.location), `/dashboard/sign-in/${token}`)).toBe(at('/dashboard?locale=nl'));
      expect(jar.has('ere_dash'), 'the session cookie reaches the dashboard\'s path').toBe(true);

      const dash = await get(jar, '/dashboard?locale=nl');
      expect(dash.body).toContain(user.email);
      const csrf = csrfIn(dash.body);
      await post(jar, '/dashboard/tokens?locale=nl', { _csrf: csrf, name: 'Home Assistant', scopes: 'chargers:read' });
      const full = await get(jar, '/dashboard?locale=nl');
      const tokenIds = [...full.body.matchAll(/data-token-id="([^"]+)"/g)].map((m) => m[1]!); // aUser's and this one
      const tokenId = tokenIds[0]!;
      expectPage(full.body, '/dashboard?locale=nl', [
        '/dashboard/sign-out?locale=nl',
        `/dashboard/accounts/${acc.accountId}/iban?locale=nl`,
        `/dashboard/sessions/${session.id}/stop?locale=nl`,
        `/dashboard/chargers/${charger.chargerId}/start?locale=nl`,
        ...tokenIds.map((id) => `/dashboard/tokens/${id}/revoke?locale=nl`),
        '/dashboard/tokens?locale=nl',
      ]);

      const made = await post(jar, '/dashboard/tokens?locale=nl', { _csrf: csrf, name: 'Tweede', scopes: 'chargers:read' });
      expect(made.statusCode).toBe(201);
      expectPage(made.body, '/dashboard/tokens?locale=nl', []);
      expect(attrs(made.body, 'href').map((h) => resolved(h, '/dashboard/tokens'))).toContain(at('/dashboard?locale=nl'));
      const revoked = await post(jar, `/dashboard/tokens/${tokenId}/revoke?locale=nl`, { _csrf: csrf });
      expect(revoked.statusCode).toBe(303);
      expect(resolved(String(revoked.headers.location), `/dashboard/tokens/${tokenId}/revoke`)).toBe(at('/dashboard?locale=nl&msg=revoked'));

      // the script builds its stream, refresh and stop-form URLs from its own URL, never from a root path
      const js = (await svc.app.inject({ method: 'GET', url: '/dashboard/assets/dashboard.js' })).body;
      expect(js).not.toMatch(/['"`]\/dashboard/);
      expect(js).toContain("new URL('../../dashboard', me.src)");
      expect(new URL('../../dashboard', at('/dashboard/assets/dashboard.js')).href).toBe(at('/dashboard'));

      const out = await post(jar, '/dashboard/sign-out?locale=nl', { _csrf: csrf });
      expect(out.statusCode).toBe(303);
      expect(resolved(String(out.headers.location), '/dashboard/sign-out')).toBe(at('/dashboard?locale=nl'));
      expect(jar.has('ere_dash'), 'sign-out clears the cookie at the dashboard\'s path').toBe(false);
    });

    it('the API reference: /docs redirects to /docs/ under the prefix, whose page loads its files by relative URLs', async () => {
      const res = await svc.app.inject({ method: 'GET', url: '/docs' });
      expect(res.statusCode).toBe(301);
      expect(resolved(String(res.headers.location), '/docs')).toBe(at('/docs/'));
      const page = await svc.app.inject({ method: 'GET', url: '/docs/' });
      expect(page.statusCode).toBe(200);
      for (const u of attrs(page.body, 'src')) expect(resolved(u, '/docs/').startsWith(`${base}/docs/`), u).toBe(true);
    });
  });
}
