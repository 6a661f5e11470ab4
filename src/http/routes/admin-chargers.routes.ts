// Operator routes for OCPP chargers: remote commands (C6.6), registration status and id tokens (C4.4).
import { z } from 'zod';
import { ALL_COMMANDS, refuseForeignAction, sendCommand } from '../../domain/chargers/commands.ts';
import { liveStateOf } from '../../domain/chargers/live-view.ts';
import type { Deps } from '../../deps.ts';
import { getIdTokens, IdTokensInput, setIdTokens } from '../../domain/chargers/id-tokens.ts';
import { getOcmfPublicKey, setOcmfPublicKey } from '../../domain/chargers/ocmf-key.ts';
import { requireCharger, getRegistrationStatus, setRegistrationStatus } from '../../domain/chargers/ocpp-charger.ts';
import { listFleetQuarantine, listQuarantine } from '../../domain/charging/quarantine.ts';
import { AdminPageFields, AdminPageQuery } from '../../../schemas/http/common.ts';
import { replayQuarantined } from '../../ocpp/replay.ts';
import { ErrorBody } from '../../../schemas/http/personal-chargers.ts';
import type { RouteRegistrar } from '../types.ts';
import { errorOf } from '../../../schemas/http/onboarding-common.ts';

const Params = z.object({ charger_id: z.string() });
const invalid = errorOf('invalid_request');
const noCharger = errorOf('charger_not_found');

/** C4.11: one quarantined message ('message') or unreadable part of an applied one ('part'). */
const QuarantineItem = z.object({
  id: z.string(),
  kind: z.enum(['message', 'part']),
  protocol: z.string(),
  action: z.string(),
  message_id: z.string().nullable(),
  /** the inbound frame as received (for a part: the part), NUL escapes and all */
  raw: z.string().nullable(),
  payload: z.unknown(),
  ack: z
    .unknown()
    .describe(
      'the answer the charger was given (D269), null for an empty one or a part; for a 1.6 StartTransaction its transactionId and idTagInfo, whose status says whether the car was let charge (D255)',
    ),
  reason: z.string(),
  received_at: z.string(),
  replayed_at: z.string().nullable(),
  replay_result: z.enum(['applied', 'unusable']).nullable(),
  replay_reason: z.string().nullable(),
});

/**
 * D214: before the body's validation (which would answer an action of neither protocol with both protocols' actions)
 * and after the admin check: an action the charger's last recorded protocol lacks is refused with that protocol's
 * actions. An unknown charger, or one never connected, is left to the schema and the handler (404, 409).
 */
async function refuseForeignActionOf(deps: Deps, chargerId: string, body: unknown): Promise<void> {
  const action = body !== null && typeof body === 'object' ? (body as Record<string, unknown>).action : undefined;
  if (typeof action !== 'string') return;
  const found = await requireCharger(deps, chargerId).then(
    () => true,
    () => false,
  );
  const protocol = found ? (await liveStateOf(deps, chargerId))?.protocol : null;
  if (protocol) refuseForeignAction(action, protocol);
}

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
          400: ErrorBody.describe('error: invalid_request (an action or payload the charger\'s protocol does not take)'),
          401: ErrorBody,
          404: noCharger,
          409: errorOf('charger_offline'),
          502: errorOf('charger_call_error'),
          504: errorOf('charger_timeout'),
        },
      },
      preValidation: async (req) => refuseForeignActionOf(deps, (req.params as { charger_id: string }).charger_id, req.body),
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
          400: invalid,
          401: ErrorBody,
          404: noCharger,
        },
      },
    },
    async (req) => setRegistrationStatus(deps, req.params.charger_id, req.body.status),
  );

  app.get(
    '/admin/chargers/:charger_id/registration',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: 'What BootNotification answers for this charger, and when it last answered one (D164)',
        params: Params,
        response: {
          200: z.object({
            charger_id: z.string(),
            registration_status: z.enum(['Accepted', 'Pending', 'Rejected']),
            boot_answered_at: z
              .string()
              .nullable()
              .describe('the last BootNotification answered Accepted or Pending (from then on the charger may be called); null: none yet, or Rejected'),
          }),
          400: invalid,
          401: ErrorBody,
          404: noCharger,
        },
      },
    },
    async (req) => getRegistrationStatus(deps, req.params.charger_id),
  );

  const IdTokensView = z.object({
    charger_id: z.string(),
    policy: z.enum(['accept_all', 'list']),
    tokens: z.array(z.object({ id_token: z.string(), status: z.string(), expires_at: z.string().nullable() })),
  });
  app.put(
    '/admin/chargers/:charger_id/id-tokens',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: "Replace the charger's authorization policy (accept_all or list) and its id tokens",
        params: Params,
        body: IdTokensInput,
        response: { 200: IdTokensView, 400: invalid, 401: ErrorBody, 404: noCharger },
      },
    },
    async (req) => setIdTokens(deps, req.params.charger_id, req.body),
  );

  app.get(
    '/admin/chargers/:charger_id/id-tokens',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: "The charger's authorization policy and id tokens as they stand (D144)",
        params: Params,
        response: { 200: IdTokensView, 400: invalid, 401: ErrorBody, 404: noCharger },
      },
    },
    async (req) => getIdTokens(deps, req.params.charger_id),
  );

  app.put(
    '/admin/chargers/:charger_id/ocmf-public-key',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary:
          "Register the public key of the charger's signing meter (C5.5): its signed meter values (OCMF) are verified with it, and one signed with another key is invalid. null removes it (the key the charger sends is then used)",
        params: Params,
        body: z.object({
          public_key: z.string().min(1).max(4000).nullable().describe('hex or base64 DER SubjectPublicKeyInfo, PEM, or a bare EC point'),
          curve: z
            .string()
            .max(40)
            .optional()
            .describe('the curve (OpenSSL or OCMF name, e.g. brainpoolP256r1 or brainpool256r1): needed for a bare point on a curve other than P-256/P-384; with a whole key, checked against it'),
        }),
        response: {
          200: z.object({ charger_id: z.string(), ocmf_public_key: z.string().nullable(), curve: z.string().nullable() }),
          400: errorOf('invalid_public_key', 'invalid_request'),
          401: ErrorBody,
          404: noCharger,
        },
      },
    },
    async (req) => setOcmfPublicKey(deps, req.params.charger_id, req.body.public_key, req.body.curve),
  );

  app.get(
    '/admin/chargers/:charger_id/ocmf-public-key',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: "The public key registered for the charger's signing meter and its curve (null: none registered; the key the charger sends is used)",
        params: Params,
        response: {
          200: z.object({ charger_id: z.string(), ocmf_public_key: z.string().nullable(), curve: z.string().nullable() }),
          400: invalid,
          401: ErrorBody,
          404: noCharger,
        },
      },
    },
    async (req) => getOcmfPublicKey(deps, req.params.charger_id),
  );

  app.get(
    '/admin/chargers/:charger_id/quarantine',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary:
          'Transaction messages of this charger that were acknowledged but could not be used, and unreadable parts of applied ones (C4.11), newest first, with the raw frame, the reason and the replay outcome',
        params: Params,
        querystring: z.object({ limit: z.coerce.number().int().min(1).max(500).default(100) }),
        response: {
          200: z.object({ charger_id: z.string(), messages: z.array(QuarantineItem) }),
          400: invalid,
          401: ErrorBody,
          404: noCharger,
        },
      },
    },
    async (req) => {
      await requireCharger(deps, req.params.charger_id);
      return listQuarantine(deps, req.params.charger_id, req.query.limit);
    },
  );

  app.get(
    '/admin/quarantine',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary:
          "The whole fleet's quarantined messages and parts (C4.11), newest first, a page at a time (limit 1–1000, default 100; offset), without the frames (each charger's list has them): since a moment, of a kind, replayed or not",
        querystring: z.object({
          since: z.iso.datetime({ offset: true }).optional().describe('only what arrived at or after this moment'),
          kind: z.enum(['message', 'part']).optional(),
          replayed: z.enum(['true', 'false']).transform((v) => v === 'true').optional().describe('true: replayed ones only; false: not yet replayed'),
          ...AdminPageQuery,
        }),
        response: {
          200: z.object({
            messages: z.array(
              QuarantineItem.omit({ raw: true, payload: true }).extend({
                charger_id: z.string(),
                raw_chars: z.number().int().nullable().describe('the kept frame\'s length in characters'),
              }),
            ),
            ...AdminPageFields,
          }),
          400: invalid,
          401: ErrorBody,
        },
      },
    },
    async (req) => listFleetQuarantine(deps, req.query),
  );

  app.post(
    '/admin/chargers/:charger_id/quarantine/:id/replay',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary:
          'Run a quarantined message through the gateway again after its cause was fixed (C4.11); the outcome is recorded on the row. Idempotent: an applied message is not applied twice',
        params: z.object({ charger_id: z.string(), id: z.string() }),
        response: {
          200: QuarantineItem,
          400: invalid,
          401: ErrorBody,
          404: ErrorBody.describe('error: charger_not_found | not_found (not_found: no such quarantined message of this charger)'),
          409: errorOf('quarantine_not_replayable'),
        },
      },
    },
    async (req) => {
      await requireCharger(deps, req.params.charger_id);
      return replayQuarantined(deps, req.params.charger_id, req.params.id);
    },
  );
};
