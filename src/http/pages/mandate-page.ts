// GET/POST /mandates/:token (C2.3): the hosted signing page. Plain HTML forms (no JavaScript); the token in
// the path is the credential, so the page is never cached and never sends a Referer.
import { z } from 'zod';
import type { FastifyReply } from 'fastify';
import { loadSigningView, signViaLink, type Locale, type SignOutcome } from '../../domain/mandates/index.ts';
import { FORM_MEDIA_TYPE, type RouteRegistrar } from '../types.ts';
import { errorPage, formPage, signedPage, stalePage } from './mandate-html.ts';
import { sendPage } from './send-page.ts';
import { basePathOf } from './page-kit.ts';
import { operatorOf, type OperatorIdentity } from '../../lib/operator.ts';
import { BadLinkBody, ErrorBody } from '../../../schemas/http/common.ts';

const Html = z.string();
/** A page answer (text/html). The answers given before the page runs stay JSON: a link that does not decode (400),
 * a body that does not parse (400) or is in another media type (415), the rate limit (429). */
const html = (description: string) => ({ description, content: { 'text/html': { schema: Html } } });
const pageResponses = {
  200: html('the signing form, or the confirmation when already signed'),
  404: html('unknown or tampered link (nothing recorded)'),
  410: html('expired link, a link voided by a revocation, or the connection is no longer active (nothing recorded)'),
};

const LocaleQuery = z.object({ locale: z.enum(['nl', 'en']).optional().catch(undefined) });

const send = sendPage;

const originOf = (url: string | null): string | null => {
  if (!url) return null;
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
};

/** What the pages of a link share: the operator (the footer) and the path the service is served under (D212). */
interface Where {
  op: OperatorIdentity;
  base: string;
}

function render(reply: FastifyReply, { op, base }: Where, token: string, outcome: SignOutcome, locale: Locale | undefined, name?: string): FastifyReply {
  const self = `${base}/mandates/${encodeURIComponent(token)}`;
  const lc: Locale = 'facts' in outcome ? outcome.facts.locale : (locale ?? 'nl');
  const other = lc === 'en' ? `${self}?locale=nl` : `${self}?locale=en`;
  switch (outcome.kind) {
    case 'not_found':
      return send(reply, 404, errorPage(lc, 'not_found', op));
    case 'expired':
      return send(reply, 410, errorPage(lc, 'expired', op));
    case 'gone':
      return send(reply, 410, errorPage(lc, 'gone', op));
    case 'void':
      return send(reply, 410, errorPage(lc, 'void', op));
    case 'form':
      return send(reply, 200, formPage(outcome.facts, `${self}?locale=${lc}`, { otherLocaleHref: other }, op), originOf(outcome.facts.returnUrl));
    case 'invalid':
      return send(
        reply,
        400,
        formPage(outcome.facts, `${self}?locale=${lc}`, { errors: outcome.errors, ...(name !== undefined ? { name } : {}), otherLocaleHref: other }, op),
        originOf(outcome.facts.returnUrl),
      );
    case 'stale':
      return send(reply, 409, stalePage(lc, `${self}?locale=${lc}`, op));
    case 'signed':
      return send(reply, 200, signedPage(lc, outcome.signedAt, outcome.facts.returnUrl, op));
    case 'just_signed':
      if (outcome.facts.returnUrl) return reply.code(303).header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(outcome.facts.returnUrl, 303);
      return send(reply, 200, signedPage(lc, outcome.signedAt, null, op));
  }
}

export const mandatePageRoutes: RouteRegistrar = (app, deps) => {
  const where: Where = { op: operatorOf(deps.config), base: basePathOf(deps.config.PUBLIC_BASE_URL) };
  app.get(
    '/mandates/:token',
    {
      config: { auth: { public: true } },
      schema: {
        tags: ['Signing page'],
        summary: 'The hosted machtiging signing page (HTML; 404 unknown or tampered link, 410 expired or void)',
        params: z.object({ token: z.string() }),
        querystring: LocaleQuery,
        response: { ...pageResponses, 400: BadLinkBody },
      },
    },
    async (req, reply) => {
      const locale = req.query.locale;
      const view = await loadSigningView(deps, req.params.token, locale);
      return render(reply, where, req.params.token, view, locale);
    },
  );

  app.post(
    '/mandates/:token',
    {
      config: { auth: { public: true } },
      schema: {
        tags: ['Signing page'],
        summary: 'Sign: records signatory name and email, time, clause version and SHA-256, IP and user agent',
        params: z.object({ token: z.string() }),
        querystring: LocaleQuery,
        body: z
          .object({
            full_name: z.string().optional(),
            consent: z.string().optional(),
            clause_sha256: z.string().optional(),
            locale: z.enum(['nl', 'en']).optional().catch(undefined),
          })
          .loose()
          .nullish(),
        consumes: [FORM_MEDIA_TYPE],
        response: {
          ...pageResponses,
          200: html('the confirmation page (or the form again when the link was already used)'),
          303: z.null().describe('signed; redirect to return_url'),
          // a body that is not a form (bad JSON, an array) or a link that does not decode gets the app's JSON error
          400: {
            description:
              'error: invalid_request | invalid_json (text/html: the form again with its errors, missing name or consent, nothing recorded; ' +
              'application/json: a body that does not parse or is not a form, or a link that does not decode)',
            content: { 'text/html': { schema: Html }, 'application/json': { schema: ErrorBody } },
          },
          409: html('the details changed after the page was shown; reload (nothing recorded)'),
        },
      },
    },
    async (req, reply) => {
      const locale = req.body?.locale ?? req.query.locale;
      const outcome = await signViaLink(deps, req.params.token, {
        fullName: req.body?.full_name,
        consent: req.body?.consent,
        clauseSha256: req.body?.clause_sha256,
        locale,
        ip: req.ip ?? null,
        userAgent: req.headers['user-agent'] ?? null,
      });
      return render(reply, where, req.params.token, outcome, locale, req.body?.full_name);
    },
  );
};
