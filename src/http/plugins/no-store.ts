// D195: an answer that carries a secret shown once must not be kept by a browser, a proxy or a CLI's HTTP cache:
// `Cache-Control: no-store` and `Pragma: no-cache` (HTTP/1.0 caches), as POST /oauth/token sends (RFC 6749 §5.1).
// Every /admin answer (partner API keys, CPO client secrets, personal tokens, charger passwords, rotated passwords,
// and whatever the admin API returns next: the operator's view is never cached), every /partner answer (claim links,
// which are bearer links), the owner's POST /chargers (the charger's OCPP password, once) and POST /v1/mandate-links
// (the signing link). Set in onSend, so the routes need not remember it; a route's own header is kept.
import type { FastifyReply, FastifyRequest } from 'fastify';
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

export function noStorePlugin(app: App): void {
  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (answersSecret(request) && !reply.hasHeader('cache-control')) {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    }
    return payload;
  });
}
