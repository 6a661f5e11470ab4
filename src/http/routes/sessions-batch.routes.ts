// C2.4 POST /v1/sessions:batch (scope cpo:sessions:write): monthly kWh per (connection, month), per-item results.
import { z } from 'zod';
import { SessionsBatchBody, SessionsBatchResponse } from '../../../schemas/http/sessions-batch.ts';
import { recordSessionsBatch } from '../../domain/energy/sessions-batch.ts';
import { principalOf } from '../auth.ts';
import type { RouteRegistrar } from '../types.ts';

const Err = z.object({ error: z.string(), detail: z.string().optional() }).loose();

export const sessionsBatchRoutes: RouteRegistrar = (app, deps) => {
  app.post(
    '/v1/sessions::batch',
    {
      config: { auth: { accepts: ['cpo'], scope: 'cpo:sessions:write' } },
      schema: {
        tags: ['CPO API'],
        summary: 'Deliver monthly kWh totals (1 to 1,000 items; idempotent per connection and month)',
        body: SessionsBatchBody,
        response: { 200: SessionsBatchResponse, 400: Err, 401: Err, 403: Err, 429: Err },
      },
    },
    async (req) => recordSessionsBatch(deps, principalOf(req, 'cpo').partnerId, req.body.items),
  );
};
