// Spec §4.3 GET /ere-position (Personal, scope chargers:read): the ERE position of the user's accounts.
import { z } from 'zod';
import { ErePositionQuery, ErePositionResponse } from '../../../schemas/http/ere-position.ts';
import { localParts } from '../../lib/amsterdam-time.ts';
import { erePositionForUser } from '../../domain/ere/position.ts';
import { principalOf } from '../auth.ts';
import type { RouteRegistrar } from '../types.ts';

const Err = z.object({ error: z.string(), detail: z.string().optional() }).loose();

export const erePositionRoutes: RouteRegistrar = (app, deps) => {
  app.get(
    '/ere-position',
    {
      config: { auth: { accepts: ['personal'], scope: 'chargers:read' } },
      schema: {
        tags: ['Personal API'],
        summary: 'ERE position for a compliance year (year ≥ 2026, default the current year)',
        querystring: ErePositionQuery,
        response: { 200: ErePositionResponse, 400: Err, 401: Err, 403: Err, 429: Err },
      },
    },
    async (req) => {
      const year = req.query.year ?? localParts(deps.clock()).year;
      return erePositionForUser(deps, principalOf(req, 'personal').userId, year);
    },
  );
};
