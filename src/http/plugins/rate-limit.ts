// C1.5 rate limits per credential with @fastify/rate-limit and a PostgreSQL store (TOOLCHAIN.md §4).
//
// The auth hook resolves the credential in onRequest, so the limit runs in an onRequest hook after it, when
// request.principal is known and before the body is read (the token endpoint's in preValidation: its credential is
// the body's). One policy per kind of caller, limits from configuration (RATE_LIMIT_*), one shared window:
//   cpo       per CPO client (every token of one client shares the count)
//   partner   per partner API key
//   personal  per personal API token
//   token     POST /oauth/token, per client_id in the body, when the body's client_secret is that client's (D125:
//             wrong guesses by anyone else must not use up the client's own count and lock it out)
//   token-ip  POST /oauth/token, per client IP as well, so invented client ids get no fresh buckets; a request that
//             does not authenticate counts here and as public only
//   public    requests without a credential (public pages, unknown routes), per client IP
// Not counted: the admin API (operator tooling; its failed authentications are limited in auth.ts), /healthz,
// /readyz, /metrics and the API docs. A request the auth layer refused (401/403) counts against the client IP
// ("public"), and its response carries the headers. The client IP is req.ip: the socket's address unless
// TRUST_PROXY names the proxies to believe (C1.5).
// A request under two policies (the token endpoint) counts in both; it is refused when either is over, and the
// headers name the policy with the fewest requests left (the one the client must respect).
//
// Headers follow draft-ietf-httpapi-ratelimit-headers-10 (structured fields):
//   RateLimit-Policy: "partner";q=120;w=60      quota q per window of w seconds
//   RateLimit: "partner";r=119;t=60             r requests left, window resets in t seconds
// Over the limit: 429 {error: "Too many requests", retry_after_seconds} and Retry-After (seconds).
import type { FastifyReply, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Deps } from '../../deps.ts';
import { clientAuthenticates } from '../../domain/credentials/tokens.ts';
import { hitRateLimit, readRateLimit } from '../../domain/platform/rate-limits.ts';
import type { App } from '../types.ts';

export type RateLimitPolicy = 'cpo' | 'partner' | 'personal' | 'token' | 'token-ip' | 'public';
type Target = { policy: RateLimitPolicy; id: string };

type StoreCallback = (err: Error | null, res?: { current: number; ttl: number }) => void;

/** The store @fastify/rate-limit calls; counts live in the rate_limits table. */
function pgStore(deps: Deps) {
  return class PgRateLimitStore {
    incr(key: string, cb: StoreCallback, timeWindow: number) {
      hitRateLimit(deps.db, key, timeWindow).then((r) => cb(null, r), (err: Error) => cb(err));
    }
    read(key: string, cb: StoreCallback) {
      readRateLimit(deps.db, key).then((r) => cb(null, r), (err: Error) => cb(err));
    }
    child() {
      return this;
    }
  };
}

const KEY = Symbol('rateLimitKey');
type Keyed = FastifyRequest & { [KEY]?: string };

const EXEMPT_PREFIXES = ['/docs', '/openapi.json'];

/** Which policies and counters a request falls under, or null when it is not counted. */
export async function classify(req: FastifyRequest, deps: Deps): Promise<Target[] | null> {
  const cfg = req.routeOptions.config;
  if (cfg?.rateLimit === false) return null;
  const url = req.routeOptions.url;
  if (url && EXEMPT_PREFIXES.some((p) => url === p || url.startsWith(p + '/'))) return null;
  const auth = cfg?.auth;
  if (auth && 'admin' in auth) return null;
  const p = req.principal;
  if (p?.kind === 'cpo') return [{ policy: 'cpo', id: p.clientId }];
  if (p?.kind === 'partner') return [{ policy: 'partner', id: p.keyId }];
  if (p?.kind === 'personal') return [{ policy: 'personal', id: p.tokenId }];
  if (url === '/oauth/token') {
    const byIp: Target = { policy: 'token-ip', id: req.ip };
    const body = req.body as { client_id?: unknown; client_secret?: unknown } | undefined;
    const clientId = body?.client_id;
    const secret = body?.client_secret;
    if (
      typeof clientId === 'string' && clientId.length > 0 && clientId.length <= 200 &&
      typeof secret === 'string' && secret.length > 0 && secret.length <= 500 &&
      (await clientAuthenticates(deps, clientId, secret))
    ) {
      return [{ policy: 'token', id: clientId }, byIp];
    }
    return [byIp, { policy: 'public', id: req.ip }];
  }
  return [{ policy: 'public', id: req.ip }];
}

export async function rateLimitPlugin(app: App, deps: Deps): Promise<void> {
  const c = deps.config;
  const windowMs = c.RATE_LIMIT_WINDOW_SECONDS * 1000;
  await app.register(rateLimit, {
    global: false, // the hooks below apply it to every route (the plugin's own hook would run before auth)
    store: pgStore(deps) as never,
    timeWindow: windowMs,
    // Decision: if the counter table cannot be reached, serve the request rather than fail it.
    skipOnError: true,
    keyGenerator: (req) => (req as Keyed)[KEY] ?? req.ip,
  });
  const max: Record<RateLimitPolicy, number> = {
    cpo: c.RATE_LIMIT_CPO_PER_MIN,
    partner: c.RATE_LIMIT_PARTNER_PER_MIN,
    personal: c.RATE_LIMIT_PERSONAL_PER_MIN,
    token: c.RATE_LIMIT_TOKEN_PER_MIN,
    'token-ip': c.RATE_LIMIT_TOKEN_IP_PER_MIN,
    public: c.RATE_LIMIT_PUBLIC_PER_MIN,
  };
  const limiters = Object.fromEntries(
    (Object.keys(max) as RateLimitPolicy[]).map((p) => [p, app.createRateLimit({ max: max[p], timeWindow: windowMs })]),
  ) as Record<RateLimitPolicy, ReturnType<App['createRateLimit']>>;

  /** Counts the request under each policy and sets the headers; returns the seconds to wait when it is over. */
  const count = async (req: FastifyRequest, reply: FastifyReply, targets: Target[]) => {
    let shown: { policy: RateLimitPolicy; max: number; remaining: number; windowS: number; reset: number } | null = null;
    let wait: number | null = null;
    for (const target of targets) {
      (req as Keyed)[KEY] = `${target.policy}:${target.id}`;
      const r = await limiters[target.policy](req);
      if (r.isAllowed) continue;
      const windowS = Math.round(r.timeWindow / 1000);
      const reset = r.ttlInSeconds > 0 ? r.ttlInSeconds : windowS;
      if (!shown || r.remaining < shown.remaining) shown = { policy: target.policy, max: r.max, remaining: r.remaining, windowS, reset };
      if (r.isExceeded) wait = Math.max(wait ?? 0, reset);
    }
    if (shown) {
      reply.header('RateLimit-Policy', `"${shown.policy}";q=${shown.max};w=${shown.windowS}`);
      reply.header('RateLimit', `"${shown.policy}";r=${shown.remaining};t=${shown.reset}`);
    }
    return wait;
  };

  const limit = async (req: FastifyRequest, reply: FastifyReply) => {
    // a database that cannot say whether the client authenticates: served uncounted, as when the counters fail
    const targets = await classify(req, deps).catch(() => null);
    if (!targets) return;
    const wait = await count(req, reply, targets);
    if (wait !== null) {
      reply.header('Retry-After', String(wait));
      return reply.code(429).send({ error: 'Too many requests', retry_after_seconds: wait });
    }
  };
  // D147: a request is counted, and refused when over, as soon as its credential is known (onRequest, after the
  // auth hook), before its body is read or checked: a client over its limit hears 429 whatever its request, not a
  // 400 for a body that is also wrong. The token endpoint's credential is in the body, so it counts once the body is
  // parsed and before it is validated.
  const isTokenEndpoint = (req: FastifyRequest) => req.routeOptions.url === '/oauth/token';
  app.addHook('onRequest', async (req, reply) => (isTokenEndpoint(req) ? undefined : limit(req, reply)));
  app.addHook('preValidation', async (req, reply) => (isTokenEndpoint(req) ? limit(req, reply) : undefined));

  // A request answered before it was counted (refused by the auth layer, a token request whose body is not JSON, 413)
  // still counts, against its credential when one was accepted and else against the client IP, and its
  // response carries the headers too. Its status stays what it was.
  app.addHook('onSend', async (req, reply, payload) => {
    if ((req as Keyed)[KEY] !== undefined || reply.hasHeader('RateLimit')) return payload;
    const targets = await classify(req, deps).catch(() => null);
    if (targets) await count(req, reply, targets);
    return payload;
  });
}
