// POST /v1/connections:update (spec §4.1).
import { z } from 'zod';
import { EanValidationEnum, MandateStatusEnum, RegistrationStatusEnum } from './onboarding-common.ts';
import { checkedByDomain } from './common.ts';
import { TargetFields } from './mandates.ts';

/** Fields left out keep their value; null clears house_number_addition. Checked by the domain (spec §4.1 rules 1–4). */
export const ConnectionCorrection = z.object({
  ean_code: z.string().optional().describe('corrected 18-digit EAN'),
  street: z.string().optional(),
  house_number: z.union([z.string(), z.number().int().positive()]).optional(),
  postal_code: z.string().optional(),
  city: z.string().optional(),
  house_number_addition: z.string().nullable().optional().describe('null clears it'),
});

export const UpdateConnectionBody = z
  .object({
    ...TargetFields,
    connection: checkedByDomain(ConnectionCorrection).describe('the corrected EAN and/or address fields'),
    acknowledge_mandate_lapses: checkedByDomain(z.boolean().optional()).describe(
      'true to correct a signed connection: its machtiging is revoked (needed after signing; ignored otherwise)',
    ),
  })
  .loose()
  .meta({ examples: [{ cpo_external_ref: 'CUST-10042', connection: { house_number: '14', house_number_addition: null }, acknowledge_mandate_lapses: true }] });

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
