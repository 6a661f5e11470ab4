// Operator routes for charger credentials (issue 10 item 8): register an OCPP charger for a user with the password
// it already has, set a charger's password, rotate it over OCPP. Passwords are never logged and never returned,
// except a generated one, once.
import { z } from 'zod';
import { registerChargerAsOperator } from '../../domain/chargers/admin-register.ts';
import { rotateChargerPassword } from '../../domain/chargers/password-rotation.ts';
import { PASSWORD_PATTERN, PASSWORD_RULE, setChargerPassword } from '../../domain/chargers/passwords.ts';
import { isoUtc } from '../../lib/time.ts';
import { ErrorBody } from '../../../schemas/http/personal-chargers.ts';
import type { RouteRegistrar } from '../types.ts';
import { errorOf } from '../../../schemas/http/onboarding-common.ts';

const Password = z.string().regex(PASSWORD_PATTERN, PASSWORD_RULE);
const errors = { 400: errorOf('invalid_request'), 401: ErrorBody, 404: errorOf('charger_not_found') };

export const adminChargerCredentialsRoutes: RouteRegistrar = (app, deps) => {
  app.post(
    '/admin/users/:user_id/chargers',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: 'Register an OCPP charger for a user, optionally with the password it already has (fleet import)',
        params: z.object({ user_id: z.string() }),
        body: z.object({
          nickname: z.string(),
          ocpp_identity: z.string().optional(),
          account_id: z.string().nullable().optional(),
          password: Password.optional(),
        }),
        response: {
          201: z.object({
            charger_id: z.string(),
            ocpp: z.object({ identity: z.string(), endpoint: z.string(), password: z.string().optional() }),
          }),
          ...errors,
          404: errorOf('user_not_found', 'account_not_found'),
          409: errorOf('ocpp_identity_taken'),
          422: ErrorBody.describe('error: charger_limit (the account already has 10 active chargers)'),
        },
      },
    },
    async (req, reply) => {
      const r = await registerChargerAsOperator(deps, req.params.user_id, req.body);
      return reply.code(201).send({
        charger_id: r.charger_id,
        ocpp: { identity: r.identity, endpoint: r.endpoint, ...(r.password !== undefined ? { password: r.password } : {}) },
      });
    },
  );

  app.put(
    '/admin/chargers/:charger_id/password',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: "Set an OCPP charger's Basic-auth password (16–40 printable characters); it replaces the current one and any pending rotation",
        params: z.object({ charger_id: z.string() }),
        body: z.object({ password: Password }),
        response: { 200: z.object({ charger_id: z.string(), identity: z.string(), password_changed_at: z.string() }), ...errors },
      },
    },
    async (req) => {
      const r = await setChargerPassword(deps, req.params.charger_id, req.body.password);
      return { charger_id: r.charger_id, identity: r.identity, password_changed_at: isoUtc(r.password_changed_at) };
    },
  );

  app.post(
    '/admin/chargers/:charger_id/password/rotate',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary:
          'Send a new password to the charger (1.6 ChangeConfiguration AuthorizationKey, 2.0.1 SetVariables BasicAuthPassword); ' +
          'the old one stays valid until the charger connects with the new one',
        params: z.object({ charger_id: z.string() }),
        body: z
          .object({ password: Password.optional(), authorization_key_encoding: z.enum(['hex', 'plain']).optional() })
          // no body at all: generate a password
          .nullish(),
        response: {
          200: z.object({
            ok: z.literal(true),
            action: z.string(),
            response: z.unknown(),
            rotated: z.boolean(),
            password: z.string().optional(),
          }),
          ...errors,
          409: errorOf('charger_offline'),
          502: errorOf('charger_call_error'),
          504: errorOf('charger_timeout'),
        },
      },
    },
    async (req) => rotateChargerPassword(deps, req.params.charger_id, req.body ?? {}),
  );
};
