// D233, D234: what the browser and the proxy are told. HSTS on every answer when PUBLIC_BASE_URL is https (never on
// an http base); /docs cannot be framed; an answer to a request that carried a credential is not cached (unless its
// route said otherwise) and every answer is nosniff; the dashboard's cookies are Secure on an https sandbox, not on
// http://localhost; and the page a sign-in link opens names the address it signs in to, escaped, in Dutch and English.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aPartner, aUser, bearer } from '../helpers/factories.ts';

let http: TestService;
let https: TestService;
beforeAll(async () => {
  http = await createTestService();
  // a public sandbox behind a TLS proxy, on the same database
  https = await createTestService({ db: http.testDb, listen: true, env: { PUBLIC_BASE_URL: 'https://sandbox.example.test', TRUST_PROXY: '1' } });
});
afterAll(async () => {
  await https?.close();
  await http?.close();
});

const inject = (svc: TestService, url: string, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'GET', url, headers: { 'x-forwarded-proto': 'https', ...headers } });

const cookiesOf = (res: { headers: Record<string, unknown> }): string[] => [res.headers['set-cookie'] ?? []].flat().map(String);
const csrfIn = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
const jarOf = (cookies: string[]) => cookies.map((c) => c.split(';', 1)[0]).join('; ');

/** Asks for a sign-in link on the sandbox page (which shows it) and returns its path, with the pre-sign-in cookie. */
async function askLink(svc: TestService, email: string, lc: 'nl' | 'en') {
  const page = await inject(svc, `/dashboard?locale=${lc}`);
  const jar = jarOf(cookiesOf(page));
  const res = await svc.app.inject({
    method: 'POST',
    url: `/dashboard/sign-in?locale=${lc}`,
    headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https' },
    payload: new URLSearchParams({ email, _csrf: csrfIn(page.body) }).toString(),
  });
  expect(res.statusCode).toBe(200);
  const href = /id="sandbox-link" href="([^"]+)"/.exec(res.body)![1]!.replaceAll('&amp;', '&');
  return { page, jar, path: new URL(href).pathname + new URL(href).search };
}

describe('D233: Strict-Transport-Security', () => {
  it('is on every answer when PUBLIC_BASE_URL is https: pages, API, errors, /docs', async () => {
    const user = await aUser(http.deps);
    const answers = [
      await inject(https, '/healthz'),
      await inject(https, '/dashboard'),
      await inject(https, '/docs/'),
      await inject(https, '/nope'),
      await inject(https, '/chargers', bearer(user.token)),
      await inject(https, '/chargers', bearer('not-a-token')),
      await inject(https, '/claim/not-a-claim-link'),
      await inject(https, '/nope/%zz'), // refused before any route: an undecodable path
    ];
    for (const res of answers) expect(res.headers['strict-transport-security'], res.body.slice(0, 200)).toBe('max-age=31536000');
  });

  it('is on the live stream too, which takes over the socket (with nosniff and its own Cache-Control)', async () => {
    const user = await aUser(http.deps);
    const stop = new AbortController();
    const res = await fetch(`${https.url}/chargers/stream`, { headers: bearer(user.token), signal: stop.signal });
    try {
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(res.headers.get('strict-transport-security')).toBe('max-age=31536000');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('cache-control')).toBe('no-cache, no-transform');
    } finally {
      stop.abort();
      await res.body?.cancel().catch(() => undefined);
    }
  });

  it('is never sent on an http base (localhost)', async () => {
    for (const url of ['/healthz', '/dashboard', '/docs/', '/nope']) {
      const res = await http.app.inject({ method: 'GET', url });
      expect(res.headers['strict-transport-security']).toBeUndefined();
    }
  });
});

describe('D233: /docs cannot be framed', () => {
  it('the reference, its script, its document and the redirect to it say frame-ancestors none, DENY and nosniff', async () => {
    const page = await http.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    for (const url of ['/docs/', '/docs/js/scalar.js', '/docs/openapi.json', '/docs']) {
      const res = await http.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBeLessThan(400);
      // only frame-ancestors: the reference runs its own scripts and styles
      expect(res.headers['content-security-policy'], url).toBe("frame-ancestors 'none'");
      expect(res.headers['x-frame-options'], url).toBe('DENY');
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });
});

describe('D233: answers to a credential are not cached; every answer is nosniff', () => {
  it('GET /v1/accounts with a CPO token, GET /chargers with a personal token, an admin read and a refused token: no-store', async () => {
    const partner = await aPartner(http.deps);
    const user = await aUser(http.deps);
    const answers = [
      await http.app.inject({ method: 'GET', url: '/v1/accounts?limit=1', headers: bearer(await partner.cpoToken()) }),
      await http.app.inject({ method: 'GET', url: '/chargers', headers: bearer(user.token) }),
      await http.app.inject({ method: 'GET', url: '/sessions', headers: bearer(user.token) }),
      await http.app.inject({ method: 'GET', url: '/admin/jobs', headers: bearer(TEST_ADMIN_TOKEN) }),
      await http.app.inject({ method: 'GET', url: '/chargers', headers: bearer('pt_not-a-real-token') }),
    ];
    expect(answers.map((r) => r.statusCode)).toEqual([200, 200, 200, 200, 401]);
    for (const res of answers) {
      expect(res.headers['cache-control'], res.body.slice(0, 200)).toBe('no-store');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('a route that sets its own Cache-Control keeps it; an answer without a credential is not forced; a JSON 404 is nosniff', async () => {
    const user = await aUser(http.deps);
    const css = await http.app.inject({ method: 'GET', url: '/dashboard/assets/dashboard.css', headers: bearer(user.token) });
    expect(css.statusCode).toBe(200);
    expect(css.headers['cache-control']).toBe('public, max-age=300');
    expect(css.headers['x-content-type-options']).toBe('nosniff');
    const health = await http.app.inject({ method: 'GET', url: '/healthz' });
    expect(health.headers['cache-control']).toBeUndefined();
    expect(health.headers['x-content-type-options']).toBe('nosniff');
    const notFound = await http.app.inject({ method: 'GET', url: '/nope/%3Cscript%3E' });
    expect(notFound.statusCode).toBe(404);
    expect(notFound.headers['content-type']).toMatch(/^application\/json/);
    expect(notFound.headers['x-content-type-options']).toBe('nosniff');
    const undecodable = await http.app.inject({ method: 'GET', url: '/nope/%zz' });
    expect(undecodable.statusCode).toBe(400);
    expect(undecodable.headers['x-content-type-options']).toBe('nosniff');
  });
});

describe('D234: the dashboard cookies over https', () => {
  it('are Secure on a sandbox whose PUBLIC_BASE_URL is https: the pre-sign-in CSRF cookie and the session', async () => {
    const user = await aUser(http.deps);
    const { page, jar, path } = await askLink(https, user.email, 'nl');
    const pre = cookiesOf(page).find((c) => c.startsWith('ere_dash_csrf='))!;
    expect(pre).toMatch(/; Secure/);
    expect(pre).toMatch(/SameSite=Strict/);
    const confirm = await inject(https, path, { cookie: jar });
    expect(confirm.statusCode).toBe(200);
    const ok = await https.app.inject({
      method: 'POST',
      url: path,
      headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-proto': 'https' },
      payload: new URLSearchParams({ _csrf: csrfIn(confirm.body) }).toString(),
    });
    expect(ok.statusCode).toBe(303);
    const session = cookiesOf(ok).find((c) => c.startsWith('ere_dash='))!;
    expect(session).toMatch(/; Secure/);
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Lax/);
  });

  it('are not Secure on http://localhost, where they must keep working', async () => {
    const user = await aUser(http.deps);
    const { page, jar, path } = await askLink(http, user.email, 'en');
    expect(cookiesOf(page).find((c) => c.startsWith('ere_dash_csrf='))).not.toMatch(/Secure/);
    const confirm = await http.app.inject({ method: 'GET', url: path, headers: { cookie: jar } });
    const ok = await http.app.inject({
      method: 'POST',
      url: path,
      headers: { cookie: jar, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ _csrf: csrfIn(confirm.body) }).toString(),
    });
    expect(ok.statusCode).toBe(303);
    const session = cookiesOf(ok).find((c) => c.startsWith('ere_dash='))!;
    expect(session).not.toMatch(/Secure/);
    const dash = await http.app.inject({ method: 'GET', url: '/dashboard', headers: { cookie: session.split(';', 1)[0]! } });
    expect(dash.body).toContain(user.email);
  });
});

describe('D234: the sign-in confirmation names the address', () => {
  it('says which address the link signs in to, escaped, in Dutch and in English', async () => {
    const email = `o'neill&co-${Date.now()}@ere-owner.nl`;
    await aUser(http.deps, { email });
    const shown = email.replace('&', '&amp;').replace("'", '&#39;');
    for (const [lc, words] of [
      ['nl', 'Deze link logt in als'],
      ['en', 'This link signs in as'],
    ] as const) {
      const { jar, path } = await askLink(http, email, lc);
      const confirm = await http.app.inject({ method: 'GET', url: path, headers: { cookie: jar } });
      expect(confirm.statusCode).toBe(200);
      const line = /<p id="sign-in-as">(.*?)<\/p>/.exec(confirm.body)?.[1];
      expect(line).toBe(`${words} <strong>${shown}</strong>`);
      expect(confirm.body).not.toContain(email);
      expect(confirm.body).toContain(lc === 'nl' ? 'Is dit niet uw e-mailadres?' : 'Is this not your e-mail address?');
    }
  });

  it('a link that no longer works names no one (410)', async () => {
    const res = await http.app.inject({ method: 'GET', url: `/dashboard/sign-in/${'x'.repeat(43)}?locale=en` });
    expect(res.statusCode).toBe(410);
    expect(res.body).not.toContain('sign-in-as');
  });
});
