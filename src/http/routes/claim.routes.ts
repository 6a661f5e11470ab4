// GET/POST /claim/:token (C3.4, C6.7): the claim page of a partner draft, and GET/POST /unsubscribe/:token
// (C3.5) linked from every invite. Plain HTML forms; the token in the path is the credential, so the pages
// are never cached and never send a Referer.
import { z } from 'zod';
import type { FastifyReply } from 'fastify';
import { confirmClaim, findClaim, nextStepAfterClaim, type Draft } from '../../domain/partners/claim.ts';
import { candidateLabels } from '../../domain/partners/ean-lookup.ts';
import { operatorOf } from '../../lib/operator.ts';
import { messageByUnsubscribeToken, suppressEmail } from '../../domain/invites/index.ts';
import { statusForCode } from '../errors.ts';
import {
  claimDonePage,
  claimFormPage,
  messagePage,
  unsubscribedPage,
  unsubscribeNotFoundPage,
  unsubscribePage,
  type Locale,
} from '../pages/claim-html.ts';
import { FORM_MEDIA_TYPE, type RouteRegistrar } from '../types.ts';
import { BadLinkBody, ErrorBody } from '../../../schemas/http/common.ts';
import { sendPage } from '../pages/send-page.ts';
import { basePathOf } from '../pages/page-kit.ts';

const LocaleQuery = z.object({ locale: z.enum(['nl', 'en']).optional().catch(undefined) });
/** D129: the link e-mailed to an existing user's address carries its confirmation code */
const ClaimQuery = LocaleQuery.extend({ confirm: z.string().max(100).optional().catch(undefined) });
const Params = z.object({ token: z.string() });
const html = {
  description: 'text/html page',
  content: { 'text/html': { schema: z.string() } },
};

const send = sendPage;

export const claimRoutes: RouteRegistrar = (app, deps) => {
  const op = operatorOf(deps.config);
  /** D212: the forms post under the path of PUBLIC_BASE_URL, where the page was served (behind a proxy at a path) */
  const base = basePathOf(deps.config.PUBLIC_BASE_URL);
  /** D160: the register's house number of each candidate EAN shown (the draft's address, or the one just entered) */
  const labelsFor = async (d: Draft, candidates: string[], postal?: string, house?: string): Promise<Record<string, string>> => {
    const postal_code = d.postal_code ?? postal?.trim();
    const house_number = d.house_number ?? house?.trim();
    return !d.ean_code && candidates.length && postal_code && house_number ? candidateLabels(deps, { postal_code, house_number }) : {};
  };
  /** C6.7 the 410 page of a claimed draft, with the machtiging's next step (issue 14 item 5) */
  const claimedPage = async (lc: Locale, token: string) => {
    const again = await findClaim(deps, token);
    const next = again.state === 'claimed' ? await nextStepAfterClaim(deps, again.draft.claimed_connection_id, lc) : undefined;
    return messagePage(lc, 'claimed', op, next);
  };

  app.get(
    '/claim/:token',
    {
      config: { auth: { public: true } },
      schema: {
        tags: ['Claim page'],
        summary: 'The claim page of a partner draft (HTML; nl, en with ?locale=en; 404 unknown link, 410 already claimed)',
        params: Params,
        querystring: ClaimQuery,
        response: { 200: html, 400: BadLinkBody, 404: html, 410: html },
      },
    },
    async (req, reply) => {
      const lc: Locale = req.query.locale ?? 'nl';
      const found = await findClaim(deps, req.params.token);
      if (found.state === 'not_found') return send(reply, 404, messagePage(lc, 'not_found', op));
      if (found.state === 'claimed') return send(reply, 410, await claimedPage(lc, req.params.token));
      const self = `${base}/claim/${encodeURIComponent(req.params.token)}`;
      const confirm = req.query.confirm;
      const other = `${self}?locale=${lc === 'nl' ? 'en' : 'nl'}${confirm ? `&confirm=${encodeURIComponent(confirm)}` : ''}`;
      const eanLabels = await labelsFor(found.draft, found.draft.ean_candidates);
      return send(
        reply,
        200,
        claimFormPage(found.draft, { action: `${self}?locale=${lc}`, otherHref: other, op, locale: lc, eanLabels, ...(confirm ? { confirm } : {}) }),
      );
    },
  );

  app.post(
    '/claim/:token',
    {
      config: { auth: { public: true } },
      schema: {
        tags: ['Claim page'],
        summary: 'Confirm the claim: creates or links the user, the concept account (and connection), then links to signing',
        consumes: [FORM_MEDIA_TYPE, 'application/json'],
        params: Params,
        querystring: LocaleQuery,
        body: z
          .object({
            street: z.string().optional(),
            city: z.string().optional(),
            ean: z.string().optional(),
            postal_code: z.string().optional().describe('asked when the draft has no address'),
            house_number: z.string().optional(),
            house_number_addition: z.string().optional(),
            iban: z.string().optional().describe('the payout account (15 to 34 letters and digits after removing whitespace); write-only, stored encrypted'),
            locale: z.enum(['nl', 'en']).optional().catch(undefined),
            confirm: z.string().max(100).optional().describe('D129: the code of the confirmation link e-mailed to an address that is already a user'),
          })
          .loose()
          .optional(),
        response: {
          200: html,
          202: { description: 'D129: the address is already a user: nothing is linked until its owner confirms from the link e-mailed to it', content: { 'text/html': { schema: z.string() } } },
          // the page with the form's error; a body that does not parse or a link that does not decode: the app's JSON error
          400: {
            description: 'error: invalid_request | invalid_json (text/html: the page with the error of the form; application/json: a body that does not parse, or a link that does not decode)',
            content: { 'text/html': { schema: z.string() }, 'application/json': { schema: ErrorBody } },
          },
          404: html,
          409: html,
          410: html,
          422: html,
        },
      },
    },
    async (req, reply) => {
      const lc: Locale = req.body?.locale ?? req.query.locale ?? 'nl';
      const b = req.body;
      const form = { street: b?.street, city: b?.city, ean: b?.ean, postal_code: b?.postal_code, house_number: b?.house_number, house_number_addition: b?.house_number_addition, iban: b?.iban, confirm: b?.confirm };
      const out = await confirmClaim(deps, req.params.token, form, lc);
      switch (out.state) {
        case 'not_found':
          return send(reply, 404, messagePage(lc, 'not_found', op));
        case 'claimed':
          return send(reply, 410, await claimedPage(lc, req.params.token));
        case 'invalid': {
          const self = `${base}/claim/${encodeURIComponent(req.params.token)}`;
          const eanLabels = await labelsFor(out.draft, out.eanCandidates ?? out.draft.ean_candidates, form.postal_code, form.house_number);
          // D241: the other language keeps the e-mailed confirmation code (D129), as the GET page's link does
          const page = claimFormPage(out.draft, {
            eanLabels,
            action: `${self}?locale=${lc}`,
            otherHref: `${self}?locale=${lc === 'nl' ? 'en' : 'nl'}${form.confirm ? `&confirm=${encodeURIComponent(form.confirm)}` : ''}`,
            op,
            locale: lc,
            errorCode: out.code,
            ...(out.eanCandidates ? { eanCandidates: out.eanCandidates } : {}),
            // D241: what the customer typed comes back with the error, the EAN too; the IBAN never does
            ...Object.fromEntries(Object.entries(form).filter(([k, v]) => v !== undefined && k !== 'iban')),
          });
          const status = statusForCode(out.code);
          return send(reply, status >= 500 ? 400 : status, page);
        }
        case 'confirm_sent':
          return send(reply, 202, messagePage(lc, 'confirm_sent', op));
        case 'done':
          return send(reply, 200, claimDonePage(lc, out.next, op));
      }
    },
  );

  const unsubscribeSchema = (summary: string) => ({
    tags: ['Claim page'],
    summary,
    params: Params,
    querystring: LocaleQuery,
    response: { 200: html, 400: BadLinkBody, 404: html },
  });
  /**
   * D168: the page's own button posts a form (application/x-www-form-urlencoded, an empty body) and a mail client's
   * one-click unsubscribe (RFC 8058) posts `List-Unsubscribe=One-Click`; whatever the body says, the POST unsubscribes.
   */
  const unsubscribePostSchema = {
    ...unsubscribeSchema('Unsubscribe: the address goes on the suppression list (reason unsubscribe); also RFC 8058 one-click'),
    consumes: [FORM_MEDIA_TYPE, 'application/json'],
    body: z.object({ 'List-Unsubscribe': z.string().optional(), locale: z.enum(['nl', 'en']).optional().catch(undefined) }).loose().nullish(),
  };

  app.get(
    '/unsubscribe/:token',
    {
      config: { auth: { public: true } },
      schema: unsubscribeSchema('Unsubscribe page linked from every invite e-mail (HTML)'),
    },
    async (req, reply) => {
      const lc: Locale = req.query.locale ?? 'nl';
      const m = await messageByUnsubscribeToken(deps, req.params.token);
      if (!m) return send(reply, 404, unsubscribeNotFoundPage(lc, op));
      return send(reply, 200, unsubscribePage(lc, m.to, `${base}/unsubscribe/${encodeURIComponent(req.params.token)}?locale=${lc}`, op));
    },
  );

  app.post(
    '/unsubscribe/:token',
    {
      config: { auth: { public: true } },
      schema: unsubscribePostSchema,
    },
    async (req, reply) => {
      const lc: Locale = req.body?.locale ?? req.query.locale ?? 'nl';
      const m = await messageByUnsubscribeToken(deps, req.params.token);
      if (!m) return send(reply, 404, unsubscribeNotFoundPage(lc, op));
      await suppressEmail(deps, { email: m.to, reason: 'unsubscribe', source: 'link' });
      return send(reply, 200, unsubscribedPage(lc, op));
    },
  );
};
