// C1.6 admin authentication, with C1.5's limit on failures: a wrong or missing bearer token on an /admin route is
// counted per client IP in the PostgreSQL counters (rate_limits, key "admin-fail:<ip>", one fixed window of
// RATE_LIMIT_WINDOW_SECONDS started by the first failure). Up to RATE_LIMIT_ADMIN_FAIL_PER_MIN failures are
// answered 401; after that every /admin request from that IP is answered 429 until the window ends, even one with
// the right token, so the answer never tells a guesser whether a guess was right.
// If the counters cannot be read, the token check alone decides (as the other limits, which skip on error). D267: the
// database being unavailable is then one warn line a minute with a count of the rest (db-unavailable.ts); any other
// failure is a bug, an error line of its own.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import { databaseUnavailableError, logDatabaseUnavailable } from './db-unavailable.ts';
import { hitRateLimit, readRateLimit, type RateLimitHit } from '../domain/platform/rate-limits.ts';
import { timingSafeEqualStr } from '../lib/secrets.ts';

const POLICY = 'admin-fail';

export async function checkAdmin(deps: Deps, req: FastifyRequest, reply: FastifyReply, bearer: string | null) {
  const token = deps.config.ADMIN_TOKEN;
  const ok = Boolean(token && bearer && timingSafeEqualStr(bearer, token));
  const max = deps.config.RATE_LIMIT_ADMIN_FAIL_PER_MIN;
  const windowMs = deps.config.RATE_LIMIT_WINDOW_SECONDS * 1000;
  const key = `${POLICY}:${req.ip}`;

  let state: RateLimitHit | null = null;
  try {
    // a right token only looks at the count; a failure adds to it (one atomic upsert, shared by every process)
    state = ok ? await readRateLimit(deps.db, key) : await hitRateLimit(deps.db, key, windowMs);
  } catch (err) {
    const down = databaseUnavailableError(err);
    if (down) logDatabaseUnavailable(req, 'auth.admin_counter_unavailable', down, 'admin failure counter unavailable, the database is unavailable; the token check alone decides');
    else req.log.error({ err }, 'admin failure counter unavailable; the token check alone decides');
  }
  if (state) {
    const windowS = Math.round(windowMs / 1000);
    const reset = state.ttl > 0 ? Math.ceil(state.ttl / 1000) : windowS;
    const over = ok ? state.current >= max : state.current > max;
    if (over || !ok) {
      reply.header('RateLimit-Policy', `"${POLICY}";q=${max};w=${windowS}`);
      reply.header('RateLimit', `"${POLICY}";r=${Math.max(0, max - state.current)};t=${reset}`);
    }
    if (over) {
      req.log.warn({ ip: req.ip, failures: state.current }, 'admin authentication failures over the limit');
      reply.header('Retry-After', String(reset));
      return reply.code(429).send({ error: 'Too many requests', retry_after_seconds: reset });
    }
  }
  if (!ok) return reply.code(401).send({ error: 'Missing or invalid API token' });
}
