// POST /v1/connections:update (spec §4.1).
import { z } from 'zod';
import { EanValidationEnum, MandateStatusEnum, RegistrationStatusEnum } from './onboarding-common.ts';
import { checkedByDomain } from './common.ts';
import { TargetFields } from './mandates.ts';
import { addressField } from './accounts.ts';

/** Fields left out keep their value; null clears house_number_addition. Checked by the domain (spec §4.1 rules 1–4). */
export const ConnectionCorrection = z.object({
  ean_code: z.string().optional().describe('corrected 18-digit EAN'),
  // as POST /v1/accounts takes them: a non-blank string or a positive integer (a blank one: address_required)
  street: addressField('street').optional(),
  house_number: addressField('house_number').optional(),
  postal_code: addressField('postal_code').optional(),
  city: addressField('city').optional(),
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
