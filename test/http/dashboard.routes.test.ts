// C7.2 the user dashboard over HTTP: sign-in by a one-time e-mail link (through the outbox; single use; 15 minutes;
// the same answer for an unknown address), the session cookie's flags, CSRF on every form, the strict CSP, personal
// API tokens made, used and revoked on the page, sign-out, and one user never seeing another's data.
import { ensureOcppCharger } from '../../src/domain/chargers/ocpp-charger.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { anOcppCharger } from '../helpers/ocpp-factories.ts';
import { anAccountWithConnection } from '../helpers/energy-factories.ts';

const clock = testClock('2026-11-22T10:00:00Z');
let svc: TestService;

beforeAll(async () => {
  svc = await createTestService({ clock });
});
afterAll(async () => {
  await svc.close();
});

type Jar = Map<string, string>;
const cookieHeader = (jar: Jar) => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
function keep(jar: Jar, setCookie: string | string[] | undefined): void {
  for (const c of [setCookie ?? []].flat()) {
    const [pair] = c.split(';');
    const [k, v] = pair!.split('=');
    if (v === '' || /Max-Age=0|Expires=Thu, 01 Jan 1970/i.test(c)) jar.delete(k!);
    else jar.set(k!, v!);
  }
}
const csrfIn = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

async function get(jar: Jar, url: string, on: TestService = svc) {
  const res = await on.app.inject({ method: 'GET', url, headers: { cookie: cookieHeader(jar) } });
  keep(jar, res.headers['set-cookie']);
  return res;
}
async function post(jar: Jar, url: string, form: Record<string, string | string[]>, on: TestService = svc) {
  const body = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) for (const x of [v].flat()) body.append(k, x);
  const res = await on.app.inject({
    method: 'POST',
    url,
    headers: { cookie: cookieHeader(jar), 'content-type': 'application/x-www-form-urlencoded' },
    payload: body.toString(),
  });
  keep(jar, res.headers['set-cookie']);
  return res;
}

/** Asks for a link as a browser would and returns the link's token from the e-mail in the outbox. */
async function askLink(jar: Jar, email: string): Promise<string> {
  const page = await get(jar, '/dashboard');
  const res = await post(jar, '/dashboard/sign-in', { email, _csrf: csrfIn(page.body) });
  expect(res.statusCode).toBe(200);
  const mail = await svc.deps.db.selectFrom('outbox_messages').select(['body', 'kind']).where('to_email', '=', email.toLowerCase()).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
  expect(mail.kind).toBe('dashboard_sign_in');
  return /\/dashboard\/sign-in\/([A-Za-z0-9_-]+)/.exec(mail.body)![1]!;
}

async function signedIn(email: string): Promise<{ jar: Jar; csrf: string }> {
  const jar: Jar = new Map();
  const token = await askLink(jar, email);
  const confirm = await get(jar, `/dashboard/sign-in/${token}`);
  const res = await post(jar, `/dashboard/sign-in/${token}`, { _csrf: csrfIn(confirm.body) });
  expect(res.statusCode).toBe(303);
  const page = await get(jar, '/dashboard');
  expect(page.statusCode).toBe(200);
  return { jar, csrf: csrfIn(page.body) };
}

describe('sign-in', () => {
  it('answers /favicon.ico with the site\'s icon, cacheable, so a page view logs no failed request in the browser', async () => {
    for (const method of ['GET', 'HEAD'] as const) {
      const res = await svc.app.inject({ method, url: '/favicon.ico' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('image/x-icon');
      expect(res.headers['cache-control']).toBe('public, max-age=86400');
      if (method === 'HEAD') continue;
      const ico = res.rawPayload;
      // an ICO of one image (reserved 0, type 1, count 1) whose image is a 32×32 PNG
      expect([ico.readUInt16LE(0), ico.readUInt16LE(2), ico.readUInt16LE(4), ico[6], ico[7]]).toEqual([0, 1, 1, 32, 32]);
      const png = ico.subarray(ico.readUInt32LE(18), ico.readUInt32LE(18) + ico.readUInt32LE(14));
      expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([32, 32]);
    }
  });

  it('answers the sign-in page with a strict CSP, and sends a one-time link through the outbox', async () => {
    const user = await aUser(svc.deps);
    const jar: Jar = new Map();
    const page = await get(jar, '/dashboard');
    expect(page.statusCode).toBe(200);
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(page.body).not.toMatch(/<script>|<style>| style="/);
    const token = await askLink(jar, user.email);
    // opening the link does not sign in (mail scanners open links): it asks to confirm
    const confirm = await get(jar, `/dashboard/sign-in/${token}`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('confirm-sign-in');
    // without the form's CSRF token nothing happens
    expect((await post(jar, `/dashboard/sign-in/${token}`, {})).statusCode).toBe(403);
    const ok = await post(jar, `/dashboard/sign-in/${token}`, { _csrf: csrfIn(confirm.body) });
    expect(ok.statusCode).toBe(303);
    const cookie = [ok.headers['set-cookie']].flat().find((c) => String(c).startsWith('ere_dash='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\/dashboard/);
    expect(cookie).toMatch(/Max-Age=2592000/);
    expect(cookie).not.toMatch(/Secure/); // sandbox over http; Secure on production
    const dash = await get(jar, '/dashboard');
    expect(dash.body).toContain(user.email);
    // the link works once
    const again = await post(new Map([...jar].filter(([k]) => k !== 'ere_dash')), `/dashboard/sign-in/${token}`, { _csrf: jar.get('ere_dash_csrf')! });
    expect(again.statusCode).toBe(410);
    // only hashes are stored
    const rows = await svc.deps.db.selectFrom('dashboard_sign_in_links').select('token_hash').execute();
    expect(rows.some((r) => r.token_hash === token)).toBe(false);
  });

  it('a link older than 15 minutes no longer signs in', async () => {
    const user = await aUser(svc.deps);
    const jar: Jar = new Map();
    const token = await askLink(jar, user.email);
    clock.advance(15 * 60_000 + 1000);
    const confirm = await get(jar, `/dashboard/sign-in/${token}`);
    expect(confirm.statusCode).toBe(410);
    expect((await post(jar, `/dashboard/sign-in/${token}`, { _csrf: jar.get('ere_dash_csrf')! })).statusCode).toBe(410);
  });

  it('gives an unknown address the same answer and sends nothing', async () => {
    const jar: Jar = new Map();
    const page = await get(jar, '/dashboard');
    const email = `nobody-${Date.now()}@example.nl`;
    const res = await post(jar, '/dashboard/sign-in', { email, _csrf: csrfIn(page.body) });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('id="link-sent"');
    expect(res.body).not.toContain('sandbox-link');
    const mails = await svc.deps.db.selectFrom('outbox_messages').select('id').where('to_email', '=', email).execute();
    expect(mails).toEqual([]);
  });

  it('sign-out ends the session (the cookie no longer opens the dashboard)', async () => {
    const user = await aUser(svc.deps);
    const { jar, csrf } = await signedIn(user.email);
    const old = jar.get('ere_dash')!;
    expect((await post(jar, '/dashboard/sign-out', {})).statusCode).toBe(403); // no CSRF token
    expect((await post(jar, '/dashboard/sign-out', { _csrf: csrf })).statusCode).toBe(303);
    const after = await get(new Map([['ere_dash', old]]), '/dashboard');
    expect(after.body).toContain('send-link');
    expect(after.body).not.toContain(user.email);
  });
});

describe('the dashboard', () => {
  it('shows only the user\'s own chargers; the stream refuses a request without a session', async () => {
    const a = await aUser(svc.deps);
    const b = await aUser(svc.deps);
    await anOcppCharger(svc, a, { nickname: 'Oprit A' });
    await anOcppCharger(svc, b, { nickname: 'Garage B' });
    const { jar } = await signedIn(a.email);
    const page = await get(jar, '/dashboard');
    expect(page.body).toContain('Oprit A');
    expect(page.body).not.toContain('Garage B');
    expect((await svc.app.inject({ method: 'GET', url: '/dashboard/stream' })).statusCode).toBe(401);
    const css = await svc.app.inject({ method: 'GET', url: '/dashboard/assets/dashboard.css' });
    expect(css.headers['content-type']).toMatch(/text\/css/);
  });

  it('shows the whole charger\'s fault and offers no start on it (D137)', async () => {
    const a = await aUser(svc.deps);
    const faulted = await anOcppCharger(svc, a, { nickname: 'Kapot' });
    const fine = await anOcppCharger(svc, a, { nickname: 'Heel' });
    for (const [ch, status] of [[faulted, { 0: 'Faulted', 1: 'Available' }], [fine, { 0: 'Available', 1: 'Available' }]] as const) {
      await ensureOcppCharger(svc.deps.db, ch.chargerId);
      await svc.deps.db.updateTable('ocpp_chargers').set({ connector_status: JSON.stringify(status) as never }).where('charger_id', '=', ch.chargerId).execute();
    }
    const { jar } = await signedIn(a.email);
    const body = (await get(jar, '/dashboard?locale=en')).body;
    expect(body).toContain('<dt>Whole charger</dt><dd><span data-field="station" class="fault">faulted</span></dd>');
    expect(body).not.toContain(`/dashboard/chargers/${faulted.chargerId}/start`);
    expect(body).toContain(`/dashboard/chargers/${fine.chargerId}/start`);
  });

  it('pages the session list twenty at a time, newest first, with links both ways', async () => {
    const user = await aUser(svc.deps);
    const charger = await anOcppCharger(svc, user, { nickname: 'Oprit P' });
    // 45 ended sessions, one a day back from the test clock; energy_wh = 1,000 × the day, so each row is known by its kWh
    await svc.deps.db
      .insertInto('charging_sessions')
      .values(
        Array.from({ length: 45 }, (_, i) => ({
          charger_id: charger.chargerId,
          transaction_id: `page-${i + 1}`,
          id_tag: null,
          started_at: new Date(clock().getTime() - (i + 1) * 86_400_000),
          ended_at: new Date(clock().getTime() - (i + 1) * 86_400_000 + 3_600_000),
          meter_start_wh: '0',
          meter_stop_wh: String((i + 1) * 1000),
          last_meter_wh: null,
          last_reading_at: null,
          energy_wh: String((i + 1) * 1000),
          status: 'completed' as const,
          stop_reason: null,
        })),
      )
      .execute();
    const { jar } = await signedIn(user.email);
    const rowsOf = (html: string) => [...html.matchAll(/<td class="n">([0-9.,]+) kWh<br>/g)].map((m) => m[1]);
    const first = await get(jar, '/dashboard?locale=en');
    expect(rowsOf(first.body)).toHaveLength(20);
    expect(rowsOf(first.body)[0]).toBe('1.00'); // the newest: a day ago, 1,000 Wh
    expect(first.body).toContain('href="/dashboard?locale=en&amp;page=2#session-list" rel="next">Older sessions<');
    expect(first.body).not.toContain('rel="prev"');
    const second = await get(jar, '/dashboard?locale=en&page=2');
    expect(rowsOf(second.body)).toHaveLength(20);
    expect(rowsOf(second.body)[0]).toBe('21.00');
    expect(second.body).toContain('rel="prev">Newer sessions<');
    expect(second.body).toContain('rel="next">Older sessions<');
    const last = await get(jar, '/dashboard?locale=en&page=3');
    expect(rowsOf(last.body)).toEqual(['41.00', '42.00', '43.00', '44.00', '45.00']);
    expect(last.body).not.toContain('rel="next"');
    const beyond = await get(jar, '/dashboard?page=9');
    expect(beyond.statusCode).toBe(200);
    expect(beyond.body).toContain('Nog geen laadsessies.');
    expect(beyond.body).toContain('rel="prev">Nieuwere sessies<');
    // like every query of the page, an odd one is answered: the first page
    for (const odd of ['0', '-1', 'abc', '99999']) {
      const res = await get(jar, `/dashboard?locale=en&page=${odd}`);
      expect(res.statusCode, odd).toBe(200);
      expect(rowsOf(res.body)[0], odd).toBe('1.00');
    }
  });

  it('creates a token shown once that works on the Personal API, then revokes it (refused)', async () => {
    const user = await aUser(svc.deps);
    const { jar, csrf } = await signedIn(user.email);
    expect((await post(jar, '/dashboard/tokens', { name: 'Home Assistant', scopes: ['chargers:read'] })).statusCode).toBe(403);
    const made = await post(jar, '/dashboard/tokens', { _csrf: csrf, name: 'Home Assistant', scopes: ['chargers:read'] });
    expect(made.statusCode).toBe(201);
    const token = /id="new-token">([^<]+)</.exec(made.body)![1]!;
    expect(token).toMatch(/^ptk_/);
    expect((await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(token) })).statusCode).toBe(200);
    // chargers:read only
    expect((await svc.app.inject({ method: 'POST', url: '/chargers', headers: bearer(token), payload: { nickname: 'x' } })).statusCode).toBe(403);
    const page = await get(jar, '/dashboard');
    expect(page.body).toContain('Home Assistant');
    expect(page.body).toContain(token.slice(-4)); // the hint
    expect(page.body).not.toContain(token);
    const id = /data-token-id="([^"]+)"><h3>Home Assistant/.exec(page.body)![1]!;
    // another user cannot revoke it
    const other = await signedIn((await aUser(svc.deps)).email);
    const foreign = await post(other.jar, `/dashboard/tokens/${id}/revoke`, { _csrf: other.csrf });
    expect(foreign.statusCode).toBe(303);
    expect(foreign.headers.location).toContain('msg=failed&why=token_not_found');
    expect((await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(token) })).statusCode).toBe(200);
    const revoked = await post(jar, `/dashboard/tokens/${id}/revoke`, { _csrf: csrf });
    expect(revoked.statusCode).toBe(303);
    expect((await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(token) })).statusCode).toBe(401);
  });

  it('refuses a token without a scope or a name, and an action without a session', async () => {
    const user = await aUser(svc.deps);
    const { jar, csrf } = await signedIn(user.email);
    const none = await post(jar, '/dashboard/tokens', { _csrf: csrf, name: 'x' });
    expect(none.statusCode).toBe(303);
    expect(none.headers.location).toContain('msg=failed&why=no_scope');
    const flash = await get(jar, String(none.headers.location));
    expect(flash.body).toContain('id="flash">Dat lukte niet: kies ten minste één recht.<');
    const anon = await post(new Map(), '/dashboard/tokens', { _csrf: csrf, name: 'x', scopes: 'chargers:read' });
    expect(anon.statusCode).toBe(401);
  });

  it('shows no words of a crafted link, and answers bad input with a readable page', async () => {
    const user = await aUser(svc.deps);
    const { jar, csrf } = await signedIn(user.email);
    const crafted = await get(jar, `/dashboard?msg=${encodeURIComponent('Bel 0900-1234')}&why=x&status=${encodeURIComponent('<b>')}`);
    expect(crafted.statusCode).toBe(200);
    expect(crafted.body).not.toContain('0900');
    expect(crafted.body).not.toContain('id="flash"');
    const refused = await get(jar, `/dashboard?locale=en&msg=refused&status=${encodeURIComponent('<b>call us</b>')}`);
    expect(refused.body).toContain('id="flash">The charger refused: ?<');
    expect((await get(jar, '/dashboard?locale=xx')).statusCode).toBe(200);
    const page = await get(new Map(), '/dashboard?locale=en');
    const bad = await post(new Map([['ere_dash_csrf', csrfIn(page.body)]]), '/dashboard/sign-in?locale=en', { email: 'not an address', _csrf: csrfIn(page.body) });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="error">Enter a valid e-mail address.<');
    const forged = await post(new Map(), '/dashboard/sign-in', { email: 'a@example.nl', _csrf: 'made-up' });
    expect(forged.statusCode).toBe(403);
    expect(forged.body).toContain('id="error">Dit formulier is verlopen of kwam niet van deze pagina. Probeer het opnieuw.<');
    for (const url of ['/dashboard/tokens/not-a-uuid/revoke', '/dashboard/chargers/%27%3B--/start', '/dashboard/sessions/12/stop']) {
      const odd = await post(jar, `${url}?locale=en`, { _csrf: csrf, connector_id: 'x' });
      expect(odd.statusCode, url).toBe(303);
      expect(odd.headers.location, url).toMatch(/msg=failed&why=(token|charger|session)_not_found/);
    }
    const noConnector = await post(jar, `/dashboard/chargers/${crypto.randomUUID()}/start`, { _csrf: csrf, connector_id: 'x' });
    expect(noConnector.headers.location).toContain('msg=failed&why=');
  });
});

describe('on production', () => {
  it('sends the link without showing it, answers a known and an unknown address alike, and marks the cookie Secure', async () => {
    const prod = await createTestService({ clock, db: svc.testDb, env: { APP_ENV: 'production' } });
    try {
      const user = await aUser(svc.deps);
      const jar: Jar = new Map();
      const csrf = csrfIn((await get(jar, '/dashboard?locale=en', prod)).body);
      const known = await post(jar, '/dashboard/sign-in?locale=en', { email: user.email, _csrf: csrf }, prod);
      const unknown = await post(jar, '/dashboard/sign-in?locale=en', { email: `nobody-${Date.now()}@example.nl`, _csrf: csrf }, prod);
      expect(known.statusCode).toBe(200);
      expect(unknown.statusCode).toBe(200);
      expect(known.body).toBe(unknown.body);
      expect(known.body).not.toContain('sandbox-link');
      await expect.poll(async () => (await svc.deps.db.selectFrom('outbox_messages').select('id').where('to_email', '=', user.email).execute()).length).toBe(1);
      const body = (await svc.deps.db.selectFrom('outbox_messages').select('body').where('to_email', '=', user.email).executeTakeFirstOrThrow()).body;
      const token = /\/dashboard\/sign-in\/([A-Za-z0-9_-]+)/.exec(body)![1]!;
      const confirm = await get(jar, `/dashboard/sign-in/${token}`, prod);
      const ok = await post(jar, `/dashboard/sign-in/${token}`, { _csrf: csrfIn(confirm.body) }, prod);
      expect(ok.statusCode).toBe(303);
      const cookie = [ok.headers['set-cookie']].flat().find((c) => String(c).startsWith('ere_dash='))!;
      expect(cookie).toMatch(/; Secure/i);
      expect(cookie).toMatch(/HttpOnly/i);
      expect(cookie).toMatch(/SameSite=Lax/i);
    } finally {
      await prod.close();
    }
  });
});

describe('an account without an IBAN (D115)', () => {
  it('asks for it on the page, stores it encrypted once, and refuses a bad one, a second one and another user\'s account', async () => {
    const user = await aUser(svc.deps, { email: `zonder-iban-${Date.now()}@voorbeeld-laden.nl` });
    const acc = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId });
    await svc.deps.db.updateTable('accounts').set({ iban_encrypted: null, display_name: 'Thuis' }).where('id', '=', acc.accountId).execute();
    const other = await anAccountWithConnection(svc.deps, {});
    await svc.deps.db.updateTable('accounts').set({ iban_encrypted: null }).where('id', '=', other.accountId).execute();
    const { jar, csrf } = await signedIn(user.email);
    const page = await get(jar, '/dashboard?locale=en');
    expect(page.body).toContain(`action="/dashboard/accounts/${acc.accountId}/iban?locale=en"`);
    expect(page.body).toContain('We have no IBAN for Thuis yet.');
    const send = (id: string, iban: string) => post(jar, `/dashboard/accounts/${id}/iban?locale=en`, { _csrf: csrf, iban });
    const flash = async (res: Awaited<ReturnType<typeof send>>) => {
      expect(res.statusCode).toBe(303);
      return /id="flash">([^<]*)</.exec((await get(jar, String(res.headers.location))).body)?.[1];
    };
    expect(await flash(await send(acc.accountId, 'NL91-ABNA'))).toBe('That did not work: this IBAN is not valid (15 to 34 letters and digits).');
    expect(await flash(await send(other.accountId, 'NL91ABNA0417164300'))).toBe('That did not work: this account is not yours.');
    expect((await svc.deps.db.selectFrom('accounts').select('iban_encrypted').where('id', '=', other.accountId).executeTakeFirstOrThrow()).iban_encrypted).toBeNull();
    expect(await flash(await send(acc.accountId, 'nl91 abna 0417 1643 00'))).toBe('The IBAN was saved.');
    const stored = await svc.deps.db.selectFrom('accounts').select('iban_encrypted').where('id', '=', acc.accountId).executeTakeFirstOrThrow();
    expect(svc.deps.cipher.decrypt(stored.iban_encrypted!)).toBe('NL91ABNA0417164300');
    // given once: no form any more, and another IBAN is not taken here
    expect((await get(jar, '/dashboard?locale=en')).body).not.toContain('id="payout"');
    expect(await flash(await send(acc.accountId, 'DE89370400440532013000'))).toBe('That did not work: this account has an IBAN already.');
    expect(svc.deps.cipher.decrypt((await svc.deps.db.selectFrom('accounts').select('iban_encrypted').where('id', '=', acc.accountId).executeTakeFirstOrThrow()).iban_encrypted!)).toBe('NL91ABNA0417164300');
    // without the session's CSRF token nothing is stored
    expect((await post(jar, `/dashboard/accounts/${other.accountId}/iban`, { _csrf: 'x', iban: 'NL91ABNA0417164300' })).statusCode).toBe(403);
  });
});

describe('D240: the dashboard for screen-reader and keyboard users', () => {
  it('shows the chargers\' OCPP status words and a refusal in the page\'s language; an unknown word as sent', async () => {
    const a = await aUser(svc.deps);
    const ch = await anOcppCharger(svc, a, { nickname: 'Twee stekkers' });
    await ensureOcppCharger(svc.deps.db, ch.chargerId);
    const status = { 0: 'Faulted', 1: 'Charging', 2: 'SuspendedEV', 3: 'Occupied', 4: '<i>Nieuw</i>' };
    await svc.deps.db.updateTable('ocpp_chargers').set({ connector_status: JSON.stringify(status) as never }).where('charger_id', '=', ch.chargerId).execute();
    const { jar } = await signedIn(a.email);
    const nl = (await get(jar, '/dashboard?locale=nl')).body;
    expect(nl).toContain('<dt>Laadpaal als geheel</dt><dd><span data-field="station" class="fault">storing</span></dd>');
    expect(nl).toContain('<dt>Aansluiting 1</dt><dd>laadt</dd><dt>Aansluiting 2</dt><dd>gepauzeerd door de auto</dd><dt>Aansluiting 3</dt><dd>bezet</dd>');
    expect(nl).toContain('<dt>Aansluiting 4</dt><dd>&lt;i&gt;Nieuw&lt;/i&gt;</dd>');
    expect(nl).not.toMatch(/<dd>(Charging|SuspendedEV|Occupied)<\/dd>/);
    const en = (await get(jar, '/dashboard?locale=en')).body;
    expect(en).toContain('<dt>Connector 2</dt><dd>paused by the car</dd>');
    const flash = async (q: string) => /id="flash">([^<]*)</.exec((await get(jar, `/dashboard?${q}`)).body)?.[1];
    expect(await flash('msg=refused&status=Rejected')).toBe('De laadpaal wees het verzoek af.');
    expect(await flash('locale=en&msg=refused&status=Rejected')).toBe('The charger rejected the request.');
    expect(await flash('msg=refused&status=Unavailable')).toBe('De laadpaal weigerde: niet beschikbaar');
    expect(await flash('msg=refused&status=Weird')).toBe('De laadpaal weigerde: Weird');
  });

  it('marks the sign-in field of a bad address, keeps the address, announces the error and says so in the title', async () => {
    for (const [lc, title] of [['nl', 'Fout: Inloggen'], ['en', 'Error: Sign in']] as const) {
      const jar: Jar = new Map();
      const page = await get(jar, `/dashboard?locale=${lc}`);
      expect(page.body).toContain('<input type="email" id="email" name="email" autocomplete="email" required>');
      const bad = await post(jar, `/dashboard/sign-in?locale=${lc}`, { email: 'jan@"voorbeeld', _csrf: csrfIn(page.body) });
      expect(bad.statusCode).toBe(400);
      expect(bad.body).toContain(`<title>${title}</title>`);
      expect(bad.body).toMatch(/<p class="error" role="alert" id="error">/);
      expect(bad.body).toContain('<input type="email" id="email" name="email" autocomplete="email" required value="jan@&quot;voorbeeld" aria-invalid="true" aria-describedby="error" autofocus>');
    }
    // an expired form is announced too, but is not the field's fault
    const forged = await post(new Map(), '/dashboard/sign-in?locale=en', { email: 'a@example.nl', _csrf: 'made-up' });
    expect(forged.body).toContain('<title>Error: Sign in</title>');
    expect(forged.body).not.toContain('aria-invalid');
  });

  it('answers a mistyped address under /dashboard with an HTML page in the owner\'s language; JSON everywhere else', async () => {
    for (const url of ['/dashboard/nope', '/dashboard/sessions/123', '/dashboard/']) {
      const res = await svc.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type'], url).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy'], url).toContain("script-src 'self'");
      expect(res.body, url).toContain('<html lang="nl">');
      expect(res.body, url).toContain('<title>Pagina niet gevonden</title>');
      expect(res.body, url).toContain('<a href="/dashboard?locale=nl" id="back">Naar mijn dashboard</a>');
    }
    const en = await svc.app.inject({ method: 'GET', url: '/dashboard/nope?locale=en' });
    expect(en.statusCode).toBe(404);
    expect(en.body).toContain('<html lang="en">');
    expect(en.body).toContain('<title>Page not found</title>');
    expect(en.body).toContain('<a href="/dashboard?locale=en" id="back">To my dashboard</a>');
    expect(en.body).toContain('href="/dashboard/nope?locale=nl" lang="nl"'); // the switch stays on the address
    const head = await svc.app.inject({ method: 'HEAD', url: '/dashboard/nope' });
    expect(head.statusCode).toBe(404);
    expect(head.headers['content-type']).toMatch(/^text\/html/);
    // the JSON answer stays for other methods, other paths and the dashboard's JSON route
    for (const [method, url] of [['POST', '/dashboard/nope'], ['GET', '/nope'], ['GET', '/dashboardx']] as const) {
      const res = await svc.app.inject({ method, url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json(), `${method} ${url}`).toEqual({ error: 'not_found', detail: `No route ${method} ${url}` });
    }
    const stream = await svc.app.inject({ method: 'GET', url: '/dashboard/stream' });
    expect(stream.statusCode).toBe(401);
    expect(stream.json().error).toBe('unauthorized');
    // behind a proxy at a path (D212) the page's links start with it
    const behind = await createTestService({ clock, db: svc.testDb, env: { PUBLIC_BASE_URL: 'https://example.nl/ere' } });
    try {
      const res = await behind.app.inject({ method: 'GET', url: '/dashboard/nope?locale=en' });
      expect(res.statusCode).toBe(404);
      expect(res.body).toContain('<a href="/ere/dashboard?locale=en" id="back">');
      expect(res.body).toContain('href="/ere/dashboard/assets/dashboard.css"');
      expect(res.body).toContain('href="/ere/dashboard/nope?locale=nl" lang="nl"');
    } finally {
      await behind.close();
    }
  });

  it('has a skip link, a language switch that keeps the page, the zone once in the table, and one figure for the running session', async () => {
    const user = await aUser(svc.deps);
    const charger = await anOcppCharger(svc, user, { nickname: 'Oprit S' });
    const row = (i: number, ended: boolean) => ({
      charger_id: charger.chargerId,
      transaction_id: `d240-${i}-${Date.now()}`,
      id_tag: null,
      started_at: new Date(clock().getTime() - (i + 1) * 86_400_000),
      ended_at: ended ? new Date(clock().getTime() - (i + 1) * 86_400_000 + 3_600_000) : null,
      meter_start_wh: '0',
      meter_stop_wh: ended ? '1000' : null,
      last_meter_wh: ended ? null : '1234',
      last_reading_at: ended ? null : new Date(clock().getTime() - 60_000),
      energy_wh: ended ? '1000' : '1234',
      status: ended ? ('completed' as const) : ('active' as const),
      stop_reason: null,
    });
    await svc.deps.db.insertInto('charging_sessions').values([row(0, false), ...Array.from({ length: 21 }, (_, i) => row(i + 1, true))]).execute();
    const { jar } = await signedIn(user.email);
    const body = (await get(jar, '/dashboard?locale=en')).body;
    // the skip link comes first and leads past the header to the content
    expect(body).toMatch(/<main>\s*<a class="skip" href="#content">Skip to content<\/a>\s*<a class="lang" href="\/dashboard\?locale=nl" lang="nl">/);
    expect(body).toContain('<div id="content" tabindex="-1">');
    expect((await get(jar, '/dashboard')).body).toContain('<a class="skip" href="#content">Naar de inhoud</a>');
    // page 2's language switch stays on page 2
    expect((await get(jar, '/dashboard?locale=en&page=2')).body).toContain('<a class="lang" href="/dashboard?page=2&amp;locale=nl" lang="nl">');
    // the zone once, in the caption; not in the rows
    expect(body).toContain('<caption class="meta">Times in Dutch time (Europe/Amsterdam).</caption>');
    const table = /<table id="sessions">[\s\S]*?<\/table>/.exec(body)![0];
    expect(table.match(/Europe\/Amsterdam/g)).toHaveLength(1);
    // the running session: the card's figure (to the Wh) in the list too, in a cell the script keeps in step
    const card = /data-field="kwh" class="kwh">([^<]+)</.exec(body)![1];
    const listed = /<tr data-session-id="[^"]+">[\s\S]*?<span data-field="kwh">([^<]+)<\/span>/.exec(body)?.[1];
    expect(listed).toBe(card);
  });

  it('keeps the sign-in link\'s page when the language is switched', async () => {
    const user = await aUser(svc.deps);
    const jar: Jar = new Map();
    const token = await askLink(jar, user.email);
    const confirm = await get(jar, `/dashboard/sign-in/${token}?locale=nl`);
    expect(confirm.body).toContain(`<a class="lang" href="/dashboard/sign-in/${token}?locale=en" lang="en">English</a>`);
  });
});
