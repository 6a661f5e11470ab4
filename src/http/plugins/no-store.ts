// The headers every answer of the service gets, set here so the routes need not remember them (on the way out, and
// on the way in for the live streams that take over the socket); a route's own Cache-Control is kept.
// - D195: an answer that carries a secret shown once must not be kept by a browser, a proxy or a CLI's HTTP cache:
//   `Cache-Control: no-store` and `Pragma: no-cache` (HTTP/1.0 caches), as POST /oauth/token sends (RFC 6749 §5.1).
//   Every /admin answer (partner API keys, CPO client secrets, personal tokens, charger passwords, rotated passwords,
//   and whatever the admin API returns next: the operator's view is never cached), every /partner answer (claim
//   links, which are bearer links), the owner's POST /chargers (the charger's OCPP password, once) and POST
//   /v1/mandate-links (the signing link).
// - D233: an answer to a request that carried a credential (an Authorization header: CPO token, partner key, personal
//   token, admin token) is `Cache-Control: no-store` too: it holds that caller's data (names, e-mail addresses, EANs,
//   id tags, sessions), which no browser or client disk cache should keep. Every answer is
//   `X-Content-Type-Options: nosniff`, and when PUBLIC_BASE_URL is https `Strict-Transport-Security: max-age=31536000`
//   (a year; without includeSubDomains or preload: the service cannot know the operator's other hosts). Browsers take
//   HSTS only from an https answer, so a plain-http hop behind the TLS proxy does not matter.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.ts';
import type { App } from '../types.ts';

/** Whether this request's answer may carry a secret shown once. */
export function answersSecret(request: FastifyRequest): boolean {
  const path = request.url.split('?', 1)[0]!;
  const under = (p: string) => path === p || path.startsWith(p + '/');
  if (under('/admin') || under('/partner')) return true;
  return request.method === 'POST' && SECRET_POSTS.has(request.routeOptions.url ?? '');
}

/** POST routes outside /admin and /partner whose answer carries a secret: a charger's OCPP password, a signing link */
const SECRET_POSTS = new Set(['/chargers', '/v1/mandate-links']);

/** HSTS for one year (31,536,000 seconds). */
export const HSTS = 'max-age=31536000';

/**
 * nosniff, and HSTS on an https base; also called by buildApp for the answers given before any route (frameworkErrors).
 * `publicBaseUrl` is read per answer: with PORT=0 the base URL is fixed only once the service listens (main.ts).
 */
export function commonHeaders(reply: FastifyReply, publicBaseUrl: string): void {
  reply.header('x-content-type-options', 'nosniff');
  if (publicBaseUrl.startsWith('https:')) reply.header('strict-transport-security', HSTS);
}

export function responseHeadersPlugin(app: App, deps: Deps): void {
  const common = (reply: FastifyReply) => commonHeaders(reply, deps.config.PUBLIC_BASE_URL);
  // on the way in too: a live stream takes over the socket (no onSend) with the headers set so far
  app.addHook('onRequest', async (_request: FastifyRequest, reply: FastifyReply) => {
    common(reply);
  });
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    common(reply); // also the answers refused before this plugin's onRequest ran
    if (!reply.hasHeader('cache-control')) {
      if (answersSecret(request)) reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      else if (request.headers.authorization !== undefined) reply.header('cache-control', 'no-store');
    }
    return payload;
  });
}
