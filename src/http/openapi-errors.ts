// The error answers in /openapi.json: every error response refers to the one ErrorBody schema and names the
// error strings it can carry, each with an example body, so a client can switch on `error` (spec §7, C1.2–C1.5).
import { z } from 'zod';
import { ErrorBody } from '../../schemas/http/common.ts';
import type { RouteAuth } from './auth.ts';

export const ERROR_BODY_REF = '#/components/schemas/ErrorBody';

export function errorBodyComponent(): Record<string, unknown> {
  const json = z.toJSONSchema(ErrorBody, { io: 'output' }) as Record<string, unknown>;
  delete json.$schema;
  return { ...json, title: 'ErrorBody', additionalProperties: true };
}

/** A route's error response as a JSON schema the transform hands to @fastify/swagger; codes go in the description. */
export function errorResponse(codes: string[], note?: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    description: `error: ${codes.join(' | ')}${note ? ` (${note})` : ''}`,
    type: 'object',
    required: ['error'],
    properties: { error: { type: 'string' }, detail: { type: 'string' }, ...extra },
  };
}

/** When a 401 of the auth layer (auth.ts, admin-auth.ts) carries a detail, and what it says. */
function unauthorizedNote(auth: RouteAuth): string {
  if ('admin' in auth) return 'a missing or wrong ADMIN_TOKEN; no detail';
  const base = 'no detail for a missing, unknown, expired or revoked credential; a credential of another kind: the detail names the credential this route takes';
  const accepts = 'accepts' in auth ? auth.accepts : [];
  return accepts.includes('partner') ? `${base}; a partner API key of the other host: the detail names the host it works on` : base;
}

/**
 * The answers the auth layer and the rate limiter give on every route of a kind, added to an operation unless the
 * route documents that status itself.
 */
export function platformResponses(auth: RouteAuth | undefined, rateLimited: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (auth && !('public' in auth)) {
    out['401'] = errorResponse(['Missing or invalid API token'], unauthorizedNote(auth));
    if ('accepts' in auth) {
      if (auth.scope) {
        // a partner key on a scoped route hears Insufficient scope too (C1.3, auth.ts): partner_api_key_scope is only
        // the answer of routes no scope governs, so a generated client does not list it here (D239)
        out['403'] = errorResponse(
          ['Insufficient scope'],
          `the token lacks ${auth.scope}; required_scope names it`,
          { required_scope: { type: 'string' } },
        );
      } else if (!auth.accepts.includes('partner')) {
        out['403'] = errorResponse(['partner_api_key_scope'], 'a partner API key reaches only Partner API routes');
      }
    } else if ('admin' in auth) {
      out['403'] = errorResponse(['partner_api_key_scope'], 'a partner API key reaches only Partner API routes');
    }
  }
  // D155: the database unavailable or too slow right now, on any operation (app.ts's error handler); a route behind
  // a credential also hears the credential lookup's own 503 (docs/platform.md), which carries no Retry-After
  const dbDown = 'service_unavailable: the database is unavailable or too slow right now, with Retry-After';
  out['503'] = errorResponse(
    auth && 'accepts' in auth ? ['Authentication is temporarily unavailable, try again shortly', 'service_unavailable'] : ['service_unavailable'],
    dbDown,
  );
  if (rateLimited) {
    out['429'] = errorResponse(['Too many requests'], 'Retry-After, RateLimit and RateLimit-Policy headers', {
      retry_after_seconds: { type: 'integer' },
    });
  } else if (auth && 'admin' in auth) {
    // C1.5: failed admin authentications are limited per client IP (admin-auth.ts); past the limit every admin
    // request from that IP is refused, even one with the right token, until the window ends
    out['429'] = errorResponse(
      ['Too many requests'],
      'too many failed admin authentications from this IP; Retry-After, RateLimit and RateLimit-Policy headers',
      { retry_after_seconds: { type: 'integer' } },
    );
  }
  return out;
}

/** The answer to a body in a media type the server does not read (app.ts), on every operation that takes a body. */
export function unsupportedMediaTypeResponse(): Record<string, unknown> {
  return errorResponse(['unsupported_media_type'], "the body's Content-Type is none the server reads: send application/json, or a form where the operation takes one");
}

/** The answer to a body over HTTP_MAX_BODY_BYTES (app.ts), on every operation that takes a body (D148). */
export function payloadTooLargeResponse(): Record<string, unknown> {
  return errorResponse(['payload_too_large'], 'the request body is larger than the server takes (HTTP_MAX_BODY_BYTES, 1 MiB by default)');
}

/**
 * Codes every operation's error answer of a status can carry, whatever its route says: what the app's error handler
 * answers for a request that fails its schema or a path that does not decode (400 invalid_request), a JSON body that
 * does not parse (400 invalid_json), a body too large (413) or in a media type the server does not read (415).
 */
export function genericErrorCodes(status: string, takesJson: boolean): string[] {
  if (status === '400') return takesJson ? ['invalid_request', 'invalid_json'] : ['invalid_request'];
  if (status === '415') return ['unsupported_media_type'];
  if (status === '413') return ['payload_too_large'];
  return [];
}

/** The response headers the document declares (components.headers), by name. */
export const RESPONSE_HEADERS: Record<string, Record<string, unknown>> = {
  RateLimit: {
    description: 'draft-ietf-httpapi-ratelimit-headers: the policy, requests left (r) and seconds until the window resets (t), e.g. `"cpo";r=119;t=60`',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'draft-ietf-httpapi-ratelimit-headers: the policy, its quota (q) and window in seconds (w), e.g. `"cpo";q=120;w=60`',
    schema: { type: 'string' },
  },
  'Retry-After': { description: 'seconds to wait before the next request', schema: { type: 'string', pattern: '^\\d+$' } },
  'Cache-Control': { description: 'no-store: the answer carries a secret and must not be cached', schema: { type: 'string', const: 'no-store' } },
};

/** How an operation is rate limited (C1.5): every request counted, or (admin API) failed authentications only. */
export type RateLimitKind = 'requests' | 'admin-failures';

/**
 * The headers a response of an operation carries. A counted request's answer carries RateLimit and RateLimit-Policy
 * whatever its status (not when the counters cannot be read: the request is served without them); on the admin API
 * only a failed authentication's answer and the 429 do. A 429 of the rate limiter carries Retry-After. The token
 * endpoint's answer is never cached.
 */
export function responseHeaderNames(kind: RateLimitKind | undefined, operationId: string, status: string): string[] {
  const out: string[] = [];
  if (kind === 'requests' || (kind === 'admin-failures' && (status === '401' || status === '429'))) out.push('RateLimit', 'RateLimit-Policy');
  if ((kind && status === '429') || status === '503') out.push('Retry-After');
  if (operationId === 'createToken' && status === '200') out.push('Cache-Control');
  return out;
}

/** Error strings of operations whose route schema documents the status without naming them. */
export const EXTRA_ERROR_CODES: Record<string, string[]> = {
  'createToken 400': ['unsupported_grant_type', 'invalid_request', 'invalid_scope'],
  'createToken 401': ['invalid_client'],
  'deliverSessionsBatch 400': ['invalid_request', 'invalid_json'],
  'listErePositions 400': ['invalid_request'],
  'listMySessions 400': ['invalid_request'],
  'getMyErePosition 400': ['invalid_request'],
  // send_invite not a boolean; import: rows not an array, csv not a string (domain/partners/index.ts)
  'uploadPartnerCustomers 400': ['consent_required', 'customers must be a non-empty array of { name, email }', 'invalid_request'],
  'uploadPartnerCustomers 403': ['No partner is linked to this API key'],
  'uploadPartnerCustomers 500': ['Failed to create drafts'],
  'importPartnerDrafts 400': ['consent_required', 'invalid_request'],
  'importPartnerDrafts 403': ['No partner is linked to this API key'],
  'importPartnerDrafts 500': ['Failed to create drafts'],
};

/** The codes a response description names ("error: a | b (note)"). */
export function codesOf(description: unknown): string[] {
  if (typeof description !== 'string' || !description.startsWith('error: ')) return [];
  const list = description.slice('error: '.length).replace(/\s+\(.*\)$/s, '');
  return list.split(' | ').map((c) => c.trim()).filter(Boolean);
}
