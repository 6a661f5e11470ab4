// POST /v1/mandate-links (C2.2): a signing link for the customer; one active mandate per connection.
import { createMandateLinkForCpo } from '../../domain/mandates/index.ts';
import { principalOf } from '../auth.ts';
import type { RouteRegistrar } from '../types.ts';
import { MandateLinkBody, MandateLinkResponse } from '../../../schemas/http/mandates.ts';
import { ErrorBody, errorOf } from '../../../schemas/http/onboarding-common.ts';

export const mandateLinksRoutes: RouteRegistrar = (app, deps) => {
  app.post(
    '/v1/mandate-links',
    {
      config: { auth: { accepts: ['cpo'], scope: 'cpo:accounts:write' } },
      schema: {
        tags: ['CPO API'],
        summary: 'Issue the signing link of a connection’s machtiging (an open link comes back with idempotent: true)',
        body: MandateLinkBody,
        response: {
          201: MandateLinkResponse,
          200: MandateLinkResponse.describe('the open, unexpired link of this connection (idempotent: true)'),
          400: errorOf('target_required', 'invalid_request', 'invalid_json'),
          404: errorOf('connection_not_found'),
          409: errorOf('ambiguous_connection', 'connection_not_active', 'mandate_already_active'),
          401: ErrorBody,
          403: ErrorBody,
          429: ErrorBody,
        },
      },
    },
    async (req, reply) => {
      const { idempotent, ...link } = await createMandateLinkForCpo(deps, principalOf(req, 'cpo').partnerId, req.body);
      // 200 with idempotent: true for the open link the connection already had, 201 for a new one
      return idempotent ? reply.code(200).send({ ok: true, idempotent: true, ...link }) : reply.code(201).send({ ok: true, ...link });
    },
  );
};
