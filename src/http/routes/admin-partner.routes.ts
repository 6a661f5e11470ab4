// Admin API of the partner area (C1.6): known referral codes, the suppression list, the e-mail outbox.
import { z } from 'zod';
import { addReferralCodes } from '../../domain/partners/index.ts';
import { listOutbox, listSuppressions, removeSuppression, requeueMessage, suppressEmail } from '../../domain/invites/index.ts';
import {
  OutboxResponse,
  OutboxStatus,
  PartnerError,
  ReferralCodesBody,
  ReferralCodesResponse,
  SuppressionBody,
  SuppressionResponse,
} from '../../../schemas/http/partner.ts';
import type { RouteRegistrar } from '../types.ts';
import { errorOf } from '../../../schemas/http/onboarding-common.ts';
import { AdminPageFields, AdminPageQuery } from '../../../schemas/http/common.ts';

const errors = { 400: errorOf('invalid_request'), 401: PartnerError };

// D131: the outbox a page at a time, with the number of messages matching the filter
const OutboxQuery = z.object({
  to: z.string().optional().describe('only the messages to this address (case-insensitive)'),
  status: OutboxStatus.optional().describe('only the messages in this status (D173)'),
  ...AdminPageQuery,
});
const OutboxPage = OutboxResponse.extend(AdminPageFields);

// D145: the suppression list read a page at a time, and an entry taken off again
const SuppressionsQuery = z.object({ email: z.string().max(320).optional().describe('only addresses containing this (case-insensitive)'), ...AdminPageQuery });
const SuppressionsPage = z.object({
  suppressions: z.array(
    z.object({
      email: z.string(),
      reason: z.string(),
      source: z.enum(['link', 'operator', 'delivery']).nullable().describe('who added it (D171): its owner through the unsubscribe link, the operator, delivery (a bounce); null: before this was kept'),
      detail: z.string().nullable(),
      created_at: z.string(),
    }),
  ),
  ...AdminPageFields,
});

export const adminPartnerRoutes: RouteRegistrar = (app, deps) => {
  app.get(
    '/admin/suppressions',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: 'The suppression list, newest first, a page at a time (limit 1–1000, default 100; offset; email filters)',
        querystring: SuppressionsQuery,
        response: { 200: SuppressionsPage, ...errors },
      },
    },
    async (req) => listSuppressions(deps, req.query),
  );

  app.delete(
    '/admin/suppressions/:email',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: 'Take an address off the suppression list (a bounce, a manual entry, an unsubscribe the operator entered; one its owner made is the owner\'s to undo: 409)',
        params: z.object({ email: z.string().min(1).max(320) }),
        response: {
          200: z.object({ email: z.string(), removed: z.literal(true) }),
          ...errors,
          404: errorOf('suppression_not_found'),
          409: errorOf('suppression_unsubscribed'),
        },
      },
    },
    async (req) => removeSuppression(deps, req.params.email),
  );

  app.post(
    '/admin/referral-codes',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: 'Add known referral codes ({codes: [...]} or {code}); rows carrying one report matched: true',
        body: ReferralCodesBody,
        response: { 201: ReferralCodesResponse, ...errors },
      },
    },
    async (req, reply) => reply.code(201).send(await addReferralCodes(deps, req.body)),
  );

  app.post(
    '/admin/suppressions',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary:
          'Put an e-mail address on the suppression list (no invites, uploads skip it as suppressed; bounce and manual also stop sign-in and confirmation mail). 201 when added; 200 with the stored entry when the address was on the list already (D173)',
        body: SuppressionBody,
        response: { 200: SuppressionResponse.describe('the address was on the list already: the stored entry, nothing changed'), 201: SuppressionResponse, ...errors },
      },
    },
    async (req, reply) => {
      const entry = await suppressEmail(deps, { email: req.body.email, reason: req.body.reason, source: 'operator' });
      return reply.code(entry.created ? 201 : 200).send({ ok: true as const, ...entry });
    },
  );

  app.post(
    '/admin/outbox/:id/requeue',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: 'Queue a failed e-mail again, due now, its retries starting over (D170); 409 for a message in another status, 404 for an unknown id',
        params: z.object({ id: z.string().max(100) }),
        response: {
          200: z.object({ id: z.string(), status: z.literal('queued'), next_attempt_at: z.string() }),
          ...errors,
          404: errorOf('outbox_message_not_found'),
          409: errorOf('outbox_message_not_failed'),
        },
      },
    },
    async (req) => requeueMessage(deps, req.params.id),
  );

  app.get(
    '/admin/outbox',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: 'E-mails the service queued or sent, newest first (C1.6), a page at a time (limit 1–1000, default 100; offset; to and status filter); links shown without their secret (D172)',
        querystring: OutboxQuery,
        response: { 200: OutboxPage, ...errors },
      },
    },
    async (req) => listOutbox(deps, req.query),
  );
};
