// POST /v1/connections:update (spec §4.1).
import { z } from 'zod';
import { EanValidationEnum, MandateStatusEnum, RegistrationStatusEnum } from './onboarding-common.ts';

export const UpdateConnectionBody = z
  .object({
    connection_id: z.unknown().optional().describe('uuid; one of connection_id, account_id, cpo_external_ref'),
    account_id: z.unknown().optional().describe('uuid; only when the account has a single active connection'),
    cpo_external_ref: z.unknown().optional().describe('string; the same key as on create'),
    connection: z
      .unknown()
      .optional()
      .describe('{ ean_code?, street?, house_number?, postal_code?, city?, house_number_addition? (null clears) }'),
    acknowledge_mandate_lapses: z.unknown().optional().describe('boolean; needed after signing; ignored when no machtiging is active'),
  })
  .loose();

export const UpdateConnectionResponse = z.object({
  ok: z.boolean(),
  changed: z.boolean(),
  connection_id: z.uuid(),
  account_id: z.uuid(),
  ean_code: z.string(),
  ean_validation_status: EanValidationEnum,
  registration_status: RegistrationStatusEnum,
  mandate_status: MandateStatusEnum,
  mandate_revoked: z.boolean(),
});
