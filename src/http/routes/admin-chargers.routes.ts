// Operator routes for OCPP chargers: remote commands (C6.6), registration status and id tokens (C4.4).
import { z } from 'zod';
import { ALL_COMMANDS, sendCommand } from '../../domain/chargers/commands.ts';
import { IdTokensInput, setIdTokens } from '../../domain/chargers/id-tokens.ts';
import { setRegistrationStatus } from '../../domain/chargers/ocpp-charger.ts';
import { ErrorBody } from '../../../schemas/http/personal-chargers.ts';
import type { RouteRegistrar } from '../types.ts';

const Params = z.object({ charger_id: z.string() });

export const adminChargersRoutes: RouteRegistrar = (app, deps) => {
  app.post(
    '/admin/chargers/:charger_id/commands',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: "Send a command to a charger in its own protocol and answer the charger's response",
        params: Params,
        body: z.object({ action: z.enum(ALL_COMMANDS), payload: z.record(z.string(), z.unknown()).default({}) }),
        response: {
          200: z.object({ ok: z.literal(true), action: z.string(), response: z.unknown() }),
          400: ErrorBody,
          401: ErrorBody,
          404: ErrorBody,
          409: ErrorBody,
          502: ErrorBody,
          504: ErrorBody,
        },
      },
    },
    async (req) => sendCommand(deps, req.params.charger_id, req.body.action, req.body.payload),
  );

  app.put(
    '/admin/chargers/:charger_id/registration',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: 'Set what BootNotification answers for this charger: Accepted, Pending or Rejected',
        params: Params,
        body: z.object({ status: z.enum(['Accepted', 'Pending', 'Rejected']) }),
        response: {
          200: z.object({ charger_id: z.string(), registration_status: z.enum(['Accepted', 'Pending', 'Rejected']) }),
          400: ErrorBody,
          401: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (req) => setRegistrationStatus(deps, req.params.charger_id, req.body.status),
  );

  app.put(
    '/admin/chargers/:charger_id/id-tokens',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: "Replace the charger's authorization policy (accept_all or list) and its id tokens",
        params: Params,
        body: IdTokensInput,
        response: {
          200: z.object({
            charger_id: z.string(),
            policy: z.enum(['accept_all', 'list']),
            tokens: z.array(z.object({ id_token: z.string(), status: z.string(), expires_at: z.string().nullable() })),
          }),
          400: ErrorBody,
          401: ErrorBody,
          404: ErrorBody,
        },
      },
    },
    async (req) => setIdTokens(deps, req.params.charger_id, req.body),
  );
};
