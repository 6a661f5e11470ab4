// Server-rendered pages (mandate signing, claim, unsubscribe) share one way of being sent: never cached, never
// framed, no scripts, forms posting only back to the service (plus an explicit extra target when given).
import type { FastifyReply } from 'fastify';

export function sendPage(reply: FastifyReply, status: number, html: string, formActionExtra?: string | null): FastifyReply {
  const formAction = ["'self'", formActionExtra].filter(Boolean).join(' ');
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header(
      'content-security-policy',
      `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
    )
    .send(html);
}
