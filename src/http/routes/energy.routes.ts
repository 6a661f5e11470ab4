// C6.5 GET /energy (Personal, scope chargers:read): monthly aggregates newest first and lifetime totals.
import { z } from 'zod';
import { EnergyResponse } from '../../../schemas/http/energy.ts';
import { energyOverview } from '../../domain/energy/overview.ts';
import { principalOf } from '../auth.ts';
import type { RouteRegistrar } from '../types.ts';

const Err = z.object({ error: z.string(), detail: z.string().optional() }).loose();

export const energyOverviewRoutes: RouteRegistrar = (app, deps) => {
  app.get(
    '/energy',
    {
      config: { auth: { accepts: ['personal'], scope: 'chargers:read' } },
      schema: {
        tags: ['Personal API'],
        summary: 'Monthly energy and ERE credits (MID chargers on an eligible account) beside every charger (*_all)',
        response: { 200: EnergyResponse, 401: Err, 403: Err, 429: Err },
      },
    },
    async (req) => energyOverview(deps, principalOf(req, 'personal').userId),
  );
};
