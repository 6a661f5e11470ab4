// C7.2 the user dashboard at /dashboard: sign-in by a one-time e-mail link, then a session cookie (HttpOnly,
// SameSite=Lax, Secure on production and on an https PUBLIC_BASE_URL (D234), 30 days, held in PostgreSQL). Every
// form carries a CSRF token: the session's once signed in, before that one bound to a cookie of its own (double
// submit). The pages allow no inline script or style (CSP). The live part is GET /dashboard/stream
// (charger-stream.routes.ts), the same stream as the Personal API's.
import cookie from '@fastify/cookie';
import crypto from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../deps.ts';
import { listChargerItems, listSessionItems } from '../../domain/charging/personal-views.ts';
import { startCharging, stopCharging } from '../../domain/charging/remote-control.ts';
import { createPersonalToken, listPersonalTokens, revokePersonalToken } from '../../domain/credentials/personal-tokens.ts';
import { connectorsOf } from '../../domain/dashboard/connectors.ts';
import { csrfMatches, requestSignInLink, sessionOf, SESSION_DAYS, signIn, signInLinkAddress, signOut, type DashboardSession } from '../../domain/dashboard/sign-in.ts';
import { energyOverview } from '../../domain/energy/overview.ts';
import { erePositionForUser } from '../../domain/ere/position.ts';
import { DomainError, isDomainError } from '../../domain/errors.ts';
import { localParts } from '../../lib/amsterdam-time.ts';
import { validEmail } from '../../lib/email.ts';
import { operatorOf } from '../../lib/operator.ts';
import { DASHBOARD_CSS, DASHBOARD_JS } from '../pages/dashboard-assets.ts';
import { FAVICON_ICO } from '../pages/favicon.ts';
import { confirmSignInPage, dashboardNotFoundPage, dashboardPage, signInPage, tokenCreatedPage, type Site } from '../pages/dashboard-html.ts';
import { REASONS, refusedText, T } from '../pages/dashboard-text.ts';
import { basePathOf, type PageLocale } from '../pages/page-kit.ts';
import { sendHtml } from '../pages/send-page.ts';
import { FORM_MEDIA_TYPE, type RouteRegistrar } from '../types.ts';
import { serveChargerStream } from './charger-stream.routes.ts';
import { accountsWithoutIban, setMissingIban } from '../../domain/accounts/payout-iban.ts';

export const SESSION_COOKIE = 'ere_dash';
const PRE_CSRF_COOKIE = 'ere_dash_csrf';
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

// lenient on purpose: a page answers any query (an unknown language is Dutch; an unknown flash code shows nothing)
const Locale = z.object({
  locale: z.string().max(10).optional(),
  msg: z.string().max(20).optional(),
  why: z.string().max(40).optional(),
  status: z.string().max(40).optional(),
  /** the session list's page (1 = the newest 20; anything but 1–9999 is the first) */
  page: z.string().max(10).optional(),
});
type Query = z.infer<typeof Locale>;
const SESSIONS_PER_PAGE = 20;
/** The outcome of an action, shown as the dashboard's flash line: a code and, for a refusal, the charger's status word. */
interface Outcome {
  msg: 'started' | 'stopped' | 'revoked' | 'iban_saved' | 'refused' | 'failed';
  why?: string;
  status?: string;
}
const Form = z.record(z.string(), z.union([z.string(), z.array(z.string())])).optional();
const page = { config: { auth: { public: true } } } as const;
const hide = { hide: true } as const;

/** What the handlers read of a request (the typed request of each route has these). */
interface Req {
  query: unknown;
  params: unknown;
  body?: unknown;
  cookies: Record<string, string | undefined>;
}
type FormBody = Record<string, string | string[]> | undefined;

/** The session of this request's cookie, or null. */
export async function dashboardSessionOf(deps: Deps, req: { cookies?: Record<string, string | undefined> }): Promise<DashboardSession | null> {
  return sessionOf(deps, req.cookies?.[SESSION_COOKIE]);
}

const send = (reply: FastifyReply, status: number, html: string): FastifyReply => sendHtml(reply, status, html, CSP);

const field = (body: unknown, name: string): string | undefined => {
  const v = (body as FormBody)?.[name];
  return typeof v === 'string' ? v : Array.isArray(v) ? v[0] : undefined;
};

export const dashboardRoutes: RouteRegistrar = async (app, deps) => {
  await app.register(cookie);
  // D212: behind a proxy at a path (PUBLIC_BASE_URL https://example.nl/ere), the browser knows the dashboard as
  // /ere/dashboard: its links, redirects and cookie path say so, or the browser leaves the service (or sends no cookie)
  const base = basePathOf(deps.config.PUBLIC_BASE_URL);
  const home = `${base}/dashboard`;
  const site: Site = { op: operatorOf(deps.config), base };
  // D234: Secure on production and wherever the service is public over https (a sandbox behind TLS), not on http://localhost
  const secure = deps.config.APP_ENV === 'production' || deps.config.PUBLIC_BASE_URL.startsWith('https:');
  const lcOf = (req: Req): PageLocale => ((req.query as Query).locale === 'en' ? 'en' : 'nl');
  const back = (lc: PageLocale, o: Outcome) => {
    const q = new URLSearchParams({ locale: lc, msg: o.msg });
    if (o.why) q.set('why', o.why);
    if (o.status) q.set('status', o.status);
    return `${home}?${q.toString()}`;
  };
  /** the flash line of a query: known codes only, so a crafted link cannot put words of its own on the page */
  const flashOf = (lc: PageLocale, q: Query): { text: string; bad: boolean } | undefined => {
    const t = T[lc];
    if (q.msg === 'started' || q.msg === 'stopped' || q.msg === 'revoked' || q.msg === 'iban_saved') return { text: t[`${q.msg}_msg`], bad: false };
    // D240: the charger's status word in the page's language (Rejected: "De laadpaal wees het verzoek af.")
    if (q.msg === 'refused') return { text: /^[A-Za-z]{1,30}$/.test(q.status ?? '') ? refusedText(lc, q.status!) : `${t.refused_msg}?`, bad: true };
    if (q.msg === 'failed') {
      const why = q.why && Object.hasOwn(REASONS[lc], q.why) ? REASONS[lc][q.why] : undefined;
      return { text: why ? `${t.failed_msg}${why}` : t.failed_plain, bad: true };
    }
    return undefined;
  };
  const answered = (r: { response: unknown }, ok: 'started' | 'stopped'): Outcome => {
    const status = (r.response as { status?: unknown } | null)?.status;
    return status === 'Accepted' ? { msg: ok } : { msg: 'refused', status: typeof status === 'string' ? status : '?' };
  };

  /** the CSRF token of a signed-out form: bound to a cookie of its own (a new one when there is none) */
  const preCsrf = (req: Req, reply: FastifyReply): string => {
    const have = req.cookies?.[PRE_CSRF_COOKIE];
    if (have && /^[A-Za-z0-9_-]{43}$/.test(have)) return have;
    const fresh = crypto.randomBytes(32).toString('base64url');
    reply.setCookie(PRE_CSRF_COOKIE, fresh, { path: home, httpOnly: true, sameSite: 'strict', secure });
    return fresh;
  };

  /** A signed-in form: the session and a matching CSRF token, else the sign-in page (403 on a bad token). */
  const guarded = async (req: Req, reply: FastifyReply): Promise<DashboardSession | null> => {
    const s = await dashboardSessionOf(deps, req);
    if (!s) {
      send(reply, 401, signInPage(lcOf(req), preCsrf(req, reply), site));
      return null;
    }
    if (!csrfMatches(s.csrf, field(req.body, '_csrf'))) {
      send(reply, 403, signInPage(lcOf(req), preCsrf(req, reply), site, { error: T[lcOf(req)].csrfFailed }));
      return null;
    }
    return s;
  };

  // the site's icon, which browsers ask the origin for by themselves (not rate limited, as a page's own assets)
  app.get('/favicon.ico', { config: { auth: { public: true }, rateLimit: false }, schema: hide }, async (_req, reply) =>
    reply.type('image/x-icon').header('cache-control', 'public, max-age=86400').send(FAVICON_ICO),
  );
  app.get('/dashboard/assets/dashboard.css', { ...page, schema: hide }, async (_req, reply) =>
    reply.type('text/css; charset=utf-8').header('cache-control', 'public, max-age=300').send(DASHBOARD_CSS),
  );
  app.get('/dashboard/assets/dashboard.js', { ...page, schema: hide }, async (_req, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').send(DASHBOARD_JS),
  );

  app.get('/dashboard', { ...page, schema: { ...hide, querystring: Locale } }, async (req, reply) => {
    const lc = lcOf(req);
    const s = await dashboardSessionOf(deps, req);
    if (!s) return send(reply, 200, signInPage(lc, preCsrf(req, reply), site));
    const year = localParts(deps.clock()).year;
    const asked = (req.query as Query).page ?? '';
    const sessionsPage = /^[1-9][0-9]{0,3}$/.test(asked) ? Number(asked) : 1;
    const [chargers, sessions, energy, ere, tokens, withoutIban] = await Promise.all([
      listChargerItems(deps, s.userId),
      listSessionItems(deps, s.userId, { limit: SESSIONS_PER_PAGE + 1, offset: (sessionsPage - 1) * SESSIONS_PER_PAGE }), // one more: is there an older page
      energyOverview(deps, s.userId),
      erePositionForUser(deps, s.userId, year),
      listPersonalTokens(deps, s.userId),
      accountsWithoutIban(deps, s.userId),
    ]);
    const flash = flashOf(lc, req.query);
    const stations = new Map<string, string>();
    const connectors = await connectorsOf(deps, chargers.map((c) => c.id), stations);
    const list = sessions.sessions;
    const page = { page: sessionsPage, older: list.length > SESSIONS_PER_PAGE };
    // D240: the connector of each running session, so a charger with several names it on its stop button
    const running = chargers.flatMap((c) => (c.current_session ? [c.current_session.id] : []));
    const sessionConnectors = new Map(
      running.length === 0
        ? []
        : (await deps.db.selectFrom('charging_sessions').select(['id', 'connector_id']).where('id', 'in', running).execute()).map((r) => [r.id, r.connector_id] as const),
    );
    return send(
      reply,
      200,
      dashboardPage(lc, { email: s.email, csrf: s.csrf, chargers, connectors, stations, sessions: list.slice(0, SESSIONS_PER_PAGE), sessionsPage: page, energy, ere, tokens, flash, withoutIban, aliveSeconds: deps.config.STREAM_KEEPALIVE_SECONDS, sessionConnectors }, site),
    );
  });

  // the live part of the page: the Personal API's stream of this user's chargers, opened with the session cookie
  app.get('/dashboard/stream', { ...page, schema: hide }, async (req, reply) => {
    const s = await dashboardSessionOf(deps, req);
    if (!s) return reply.code(401).send({ error: 'unauthorized', detail: `Sign in on ${home} first.` });
    if (req.method === 'HEAD') return reply.code(200).header('content-type', 'text/event-stream; charset=utf-8').send('');
    // the session is the stream's owner: signed out (on another tab or device, through any process) its streams end
    // at once, expired at the next keep-alive tick (charger-stream.routes.ts, D64)
    // the keep-alive as an event: the page's script hears it and tells a stalled stream from a quiet one (D109)
    await serveChargerStream(app, deps, req, reply, s.userId, s.id, { aliveEvents: true });
    return reply;
  });

  app.post('/dashboard/sign-in', { ...page, schema: { ...hide, querystring: Locale, body: Form, consumes: [FORM_MEDIA_TYPE] } }, async (req, reply) => {
    const lc = lcOf(req);
    const csrf = preCsrf(req, reply);
    if (!csrfMatches(csrf, field(req.body, '_csrf'))) return send(reply, 403, signInPage(lc, csrf, site, { error: T[lc].csrfFailed }));
    const email = field(req.body, 'email') ?? '';
    // D240: the field marked and the typed address kept (cut to the length an address can have)
    if (!validEmail(email)) return send(reply, 400, signInPage(lc, csrf, site, { error: T[lc].badEmail, badEmail: email.slice(0, 320) }));
    // the same answer whether or not the address is a user's; the sandbox shows the link itself. On production the
    // answer does not wait for the link to be made, so its timing does not tell either.
    if (deps.config.APP_ENV !== 'sandbox') {
      requestSignInLink(deps, email, lc).catch((err) => req.log.error({ err }, 'dashboard: the sign-in link could not be made'));
      return send(reply, 200, signInPage(lc, csrf, site, { sent: true }));
    }
    const link = await requestSignInLink(deps, email, lc);
    return send(reply, 200, signInPage(lc, csrf, site, { sent: true, sandboxLink: link }));
  });

  const Token = z.object({ token: z.string().min(1).max(100) });
  app.get('/dashboard/sign-in/:token', { ...page, schema: { ...hide, params: Token, querystring: Locale } }, async (req, reply) => {
    // a GET never signs in (mail scanners open links): the page asks to confirm with a button
    // the page names the address the link signs in to (D234), so a link sent by someone else shows whose it is
    const address = await signInLinkAddress(deps, req.params.token);
    return send(reply, address ? 200 : 410, confirmSignInPage(lcOf(req), req.params.token, preCsrf(req, reply), site, address));
  });

  app.post('/dashboard/sign-in/:token', { ...page, schema: { ...hide, params: Token, querystring: Locale, body: Form, consumes: [FORM_MEDIA_TYPE] } }, async (req, reply) => {
    const lc = lcOf(req);
    const csrf = preCsrf(req, reply);
    if (!csrfMatches(csrf, field(req.body, '_csrf'))) return send(reply, 403, signInPage(lc, csrf, site, { error: T[lc].csrfFailed }));
    try {
      const s = await signIn(deps, req.params.token);
      reply.setCookie(SESSION_COOKIE, s.cookie, { path: home, httpOnly: true, sameSite: 'lax', secure, maxAge: SESSION_DAYS * 86_400 });
      return reply.redirect(`${home}?locale=${lc}`, 303);
    } catch (err) {
      if (isDomainError(err)) return send(reply, 410, confirmSignInPage(lc, req.params.token, csrf, site, null));
      throw err;
    }
  });

  app.post('/dashboard/sign-out', { ...page, schema: { ...hide, querystring: Locale, body: Form, consumes: [FORM_MEDIA_TYPE] } }, async (req, reply) => {
    const s = await guarded(req, reply);
    if (!s) return reply;
    await signOut(deps, s.id);
    reply.clearCookie(SESSION_COOKIE, { path: home });
    return reply.redirect(`${home}?locale=${lcOf(req)}`, 303);
  });

  /** A signed-in action: its outcome comes back as the dashboard's flash line. */
  const action = (run: (s: DashboardSession, req: Req) => Promise<Outcome>) => async (req: Req, reply: FastifyReply) => {
    const s = await guarded(req, reply);
    if (!s) return reply;
    const lc = lcOf(req);
    try {
      return reply.redirect(back(lc, await run(s, req)), 303);
    } catch (err) {
      if (isDomainError(err)) return reply.redirect(back(lc, { msg: 'failed', why: err.code }), 303);
      throw err;
    }
  };
  // any id is answered on the page: one that is not a uuid is simply not the user's (not found)
  const Id = z.object({ id: z.string().max(100) });
  const idOf = (req: Req, notFound: string): string => {
    const id = (req.params as { id: string }).id;
    if (!z.uuid().safeParse(id).success) throw new DomainError(notFound, 'No such id.');
    return id;
  };
  const signedIn = { ...page, schema: { ...hide, params: Id, querystring: Locale, body: Form, consumes: [FORM_MEDIA_TYPE] } };

  app.post(
    '/dashboard/chargers/:id/start',
    signedIn,
    action(async (s, req) => {
      const connectorId = Number(field(req.body, 'connector_id') ?? '1');
      return answered(await startCharging(deps, { userId: s.userId, chargerId: idOf(req, 'charger_not_found'), connectorId }), 'started');
    }),
  );
  app.post(
    '/dashboard/sessions/:id/stop',
    signedIn,
    action(async (s, req) => answered(await stopCharging(deps, { userId: s.userId, sessionId: idOf(req, 'session_not_found') }), 'stopped')),
  );
  app.post(
    '/dashboard/accounts/:id/iban',
    signedIn,
    action(async (s, req) => {
      await setMissingIban(deps, s.userId, idOf(req, 'account_not_found'), field(req.body, 'iban'));
      return { msg: 'iban_saved' };
    }),
  );
  app.post(
    '/dashboard/tokens/:id/revoke',
    signedIn,
    action(async (s, req) => {
      await revokePersonalToken(deps, s.userId, idOf(req, 'token_not_found'));
      return { msg: 'revoked' };
    }),
  );

  app.post('/dashboard/tokens', { ...page, schema: { ...hide, querystring: Locale, body: Form, consumes: [FORM_MEDIA_TYPE] } }, async (req, reply) => {
    const s = await guarded(req, reply);
    if (!s) return reply;
    const lc = lcOf(req);
    const raw = (req.body as FormBody)?.scopes;
    const scopes = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
    const name = field(req.body, 'name') ?? '';
    if (name.trim() === '') return reply.redirect(back(lc, { msg: 'failed', why: 'no_name' }), 303);
    if (scopes.length === 0) return reply.redirect(back(lc, { msg: 'failed', why: 'no_scope' }), 303);
    try {
      const t = await createPersonalToken(deps, s.userId, { name, scopes });
      return send(reply, 201, tokenCreatedPage(lc, t.token, name.trim(), site));
    } catch (err) {
      if (isDomainError(err)) return reply.redirect(back(lc, { msg: 'failed', why: err.code }), 303);
      throw err;
    }
  });
};

/**
 * D240: the not-found answer of a GET or HEAD under /dashboard (a mistyped or guessed address): an HTML page in the
 * owner's language (`?locale=`, as every dashboard page) with a link back, under the service's base path (D212).
 * Null for any other request, which keeps the JSON not-found answer. Every JSON route under /dashboard (the stream) is
 * a route, so never reaches this.
 */
export function dashboardNotFound(deps: Deps): (req: FastifyRequest, reply: FastifyReply) => FastifyReply | null {
  const base = basePathOf(deps.config.PUBLIC_BASE_URL);
  const site: Site = { op: operatorOf(deps.config), base };
  return (req, reply) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return null;
    const path = req.url.split('?')[0]!;
    if (path !== '/dashboard' && !path.startsWith('/dashboard/')) return null;
    const locale = new URLSearchParams(req.url.slice(path.length + 1)).get('locale');
    return send(reply, 404, dashboardNotFoundPage(locale === 'en' ? 'en' : 'nl', site, path));
  };
}
