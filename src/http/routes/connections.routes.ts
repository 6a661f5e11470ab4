// POST /v1/connections:update (spec §4.1): correct the EAN or address of a connection the caller created.
import { updateConnection } from '../../domain/connections/index.ts';
import { principalOf } from '../auth.ts';
import type { RouteRegistrar } from '../types.ts';
import { UpdateConnectionBody, UpdateConnectionResponse } from '../../../schemas/http/connections.ts';
import { ErrorBody, errorOf } from '../../../schemas/http/onboarding-common.ts';

export const connectionsRoutes: RouteRegistrar = (app, deps) => {
  app.post(
    '/v1/connections::update',
    {
      config: { auth: { accepts: ['cpo'], scope: 'cpo:accounts:write' } },
      schema: {
        tags: ['CPO API'],
        summary: 'Correct the EAN or address of a connection (partial body; an unchanged body answers changed: false)',
        body: UpdateConnectionBody,
        response: {
          200: UpdateConnectionResponse,
          400: errorOf('target_required', 'invalid_ean', 'address_required', 'invalid_json', 'invalid_request'),
          404: errorOf('connection_not_found'),
          409: errorOf('ambiguous_connection', 'connection_not_active', 'ean_in_use', 'mandate_signed', 'ere_booked'),
          422: errorOf('ean_address_mismatch', 'ean_not_dutch'),
          401: ErrorBody,
          403: ErrorBody,
          429: ErrorBody,
        },
      },
    },
    async (req) => updateConnection(deps, principalOf(req, 'cpo').partnerId, req.body),
  );
};
