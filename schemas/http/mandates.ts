// POST /v1/mandate-links (C2.2) and the sandbox signature (C2.6).
import { z } from 'zod';
import { MandateStatusEnum, Timestamp } from './onboarding-common.ts';

export const MandateLinkBody = z
  .object({
    connection_id: z.unknown().optional(),
    account_id: z.unknown().optional(),
    cpo_external_ref: z.unknown().optional(),
    return_url: z.string().optional().describe('https (http only on localhost); the signing page redirects there after signing'),
    locale: z.enum(['nl', 'en']).optional().describe('nl (default) or en'),
  })
  .loose();

export const MandateLinkResponse = z.object({
  ok: z.boolean(),
  idempotent: z.literal(true).optional(),
  mandate_link_id: z.uuid(),
  connection_id: z.uuid(),
  account_id: z.uuid(),
  url: z.string(),
  expires_at: Timestamp,
  clause_version: z.string(),
  mandate_status: MandateStatusEnum,
});

export const SandboxSignBody = z.object({ full_name: z.string().optional() }).loose().nullish();

export const SandboxSignResponse = z.object({
  ok: z.boolean(),
  connection_id: z.uuid(),
  account_id: z.uuid(),
  mandate_status: z.literal('active'),
  registration_status: z.literal('ingediend'),
  mandate_valid_from: Timestamp,
  clause_version: z.string(),
});

export const RecheckResponse = z.object({
  ok: z.boolean(),
  checked: z.number().int(),
  matched: z.number().int(),
  mismatched: z.number().int(),
  unverified: z.number().int(),
  failed: z.number().int(),
});
