// C2.6 sandbox helper: POST /sandbox/connections/:connection_id/register-ere marks a delivered month registered.
// Sandbox only (app.ts 404s /sandbox on production); a caller reaches only its own partner's connections.
import { z } from 'zod';
import { sandboxRegisterMonth } from '../../domain/ere/review.ts';
import type { RouteRegistrar } from '../types.ts';
import { requiredCheckedByDomain } from '../../../schemas/http/common.ts';
import { errorOf } from '../../../schemas/http/onboarding-common.ts';
import { EnergyMonthSchema } from './admin-ere.routes.ts';

const Err = z.object({ error: z.string(), detail: z.string().optional() }).loose();

export const sandboxEnergyRoutes: RouteRegistrar = (app, deps) => {
  app.post(
    '/sandbox/connections/:connection_id/register-ere',
    {
      // D126: a CPO token needs the scope that delivers energy (a partner key is the partner's whole sandbox)
      config: { auth: { accepts: ['cpo', 'partner'], scope: 'cpo:sessions:write' } },
      schema: {
        tags: ['Sandbox helpers'],
        summary: 'Mark a delivered month of the connection registered as ERE (sandbox)',
        params: z.object({ connection_id: z.string() }),
        body: z
          .object({ month: requiredCheckedByDomain(z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/)).describe('YYYY-MM, a delivered month of this connection (else 400 invalid_month)') })
          .loose(),
        response: {
          200: z.object({ ok: z.literal(true), energy_month: EnergyMonthSchema }),
          400: errorOf('invalid_month', 'invalid_request', 'invalid_json'),
          401: Err,
          403: Err,
          404: errorOf('connection_not_found', 'energy_month_not_found'),
          409: errorOf('invalid_transition', 'energy_held', 'month_not_covered'),
        },
      },
    },
    async (req) => {
      const p = req.principal;
      if (!p || p.kind === 'personal') throw new Error('route expected a CPO or partner principal');
      const m = await sandboxRegisterMonth(deps, p.partnerId, req.params.connection_id, req.body.month);
      return { ok: true as const, energy_month: m };
    },
  );
};
