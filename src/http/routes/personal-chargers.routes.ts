// GET /chargers and POST /chargers of the Personal API (spec §2, §4.3, C4.8, C4.9).
import { listChargerItems } from '../../domain/charging/personal-views.ts';
import { registerOcppCharger } from '../../domain/chargers/register-ocpp-charger.ts';
import { ChargerList, CreateChargerBody, CreatedCharger, ErrorBody } from '../../../schemas/http/personal-chargers.ts';
import { errorOf } from '../../../schemas/http/onboarding-common.ts';
import { principalOf } from '../auth.ts';
import type { RouteRegistrar } from '../types.ts';

export const personalChargersRoutes: RouteRegistrar = (app, deps) => {
  app.get(
    '/chargers',
    {
      config: { auth: { accepts: ['personal'], scope: 'chargers:read' } },
      schema: {
        tags: ['Personal API'],
        summary: 'Your chargers with their live state (intended for frequent status checks)',
        response: { 200: ChargerList, 401: ErrorBody, 403: ErrorBody },
      },
    },
    async (req) => {
      const p = principalOf(req, 'personal');
      return { chargers: await listChargerItems(deps, p.userId) };
    },
  );

  app.post(
    '/chargers',
    {
      config: { auth: { accepts: ['personal'], scope: 'chargers:write' } },
      schema: {
        tags: ['Personal API'],
        summary: 'Register a new OCPP charger; the answer carries its OCPP password once',
        body: CreateChargerBody,
        response: {
          201: CreatedCharger,
          400: errorOf('invalid_request'),
          401: ErrorBody,
          403: ErrorBody,
          404: errorOf('account_not_found'),
          409: errorOf('ocpp_identity_taken'),
          422: ErrorBody.describe('error: charger_limit (the account already has 10 active chargers)'),
        },
      },
    },
    async (req, reply) => {
      const p = principalOf(req, 'personal');
      const reg = await registerOcppCharger(deps, {
        ownerUserId: p.userId,
        nickname: req.body.nickname,
        identity: req.body.ocpp_identity,
        accountId: req.body.account_id ?? null,
      });
      const [item] = await listChargerItems(deps, p.userId, reg.charger_id);
      return reply.code(201).send({ ...item!, ocpp: { identity: reg.identity, endpoint: reg.endpoint, password: reg.password } });
    },
  );
};
