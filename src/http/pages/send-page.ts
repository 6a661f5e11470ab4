// Server-rendered pages (mandate signing, claim, unsubscribe) share one way of being sent: never cached, never
// framed, no scripts, forms posting only back to the service (plus an explicit extra target when given).
import type { FastifyReply } from 'fastify';

export function sendPage(reply: FastifyReply, status: number, html: string, formActionExtra?: string | null): FastifyReply {
  const formAction = ["'self'", formActionExtra].filter(Boolean).join(' ');
  return sendHtml(reply, status, html, `default-src 'none'; style-src 'unsafe-inline'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`);
}

/** A page with its content security policy: never cached, never framed, no referrer. */
export function sendHtml(reply: FastifyReply, status: number, html: string, csp: string): FastifyReply {
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', csp)
    .send(html);
}
