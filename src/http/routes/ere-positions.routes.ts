// C2.5 GET /v1/ere-positions (scope cpo:accounts:read): one position per account of the caller's partner.
import { z } from 'zod';
import { ErePositionsQuery, ErePositionsResponse } from '../../../schemas/http/ere-positions.ts';
import { localParts } from '../../lib/amsterdam-time.ts';
import { listCpoErePositions } from '../../domain/ere/cpo-positions.ts';
import { principalOf } from '../auth.ts';
import { filterText } from '../validation-codes.ts';
import type { RouteRegistrar } from '../types.ts';

const Err = z.object({ error: z.string(), detail: z.string().optional() }).loose();

export const erePositionsRoutes: RouteRegistrar = (app, deps) => {
  app.get(
    '/v1/ere-positions',
    {
      config: { auth: { accepts: ['cpo'], scope: 'cpo:accounts:read' } },
      schema: {
        tags: ['CPO API'],
        summary: 'ERE positions per account (filter cpo_external_ref, year; limit 1–200, offset ≥ 0)',
        querystring: ErePositionsQuery,
        response: { 200: ErePositionsResponse, 400: Err, 401: Err, 403: Err, 429: Err },
      },
    },
    async (req) =>
      listCpoErePositions(deps, principalOf(req, 'cpo').partnerId, {
        year: req.query.year ?? localParts(deps.clock()).year,
        limit: req.query.limit,
        offset: req.query.offset,
        cpo_external_ref: filterText('cpo_external_ref', req.query.cpo_external_ref),
      }),
  );
};
