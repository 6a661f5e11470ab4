// POST /v1/mandate-links (C2.2) and the sandbox signature (C2.6).
import { z } from 'zod';
import { MandateStatusEnum, Timestamp } from './onboarding-common.ts';
import { checkedByDomain, Uuid } from './common.ts';

/** Which connection: its rules (precedence, 404 for an id of another partner) are the domain's (C2.2). */
export const TargetFields = {
  connection_id: checkedByDomain(Uuid.nullish()).describe('the connection; one of connection_id, account_id, cpo_external_ref'),
  account_id: checkedByDomain(Uuid.nullish()).describe('the account, when it has a single active connection'),
  cpo_external_ref: checkedByDomain(z.string().nullish()).describe('your customer number, as sent on POST /v1/accounts'),
};

export const MandateLinkBody = z
  .object({
    ...TargetFields,
    return_url: z.string().optional().describe('https (http only on localhost); the signing page redirects there after signing'),
    locale: z.enum(['nl', 'en']).optional().describe('nl (default) or en'),
  })
  .loose()
  .meta({ examples: [{ cpo_external_ref: 'CUST-10042', locale: 'nl', return_url: 'https://app.example-cpo.nl/onboarding/done' }] });

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
