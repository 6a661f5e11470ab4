// POST /v1/accounts and GET /v1/accounts (spec §4.1). The body is loose on purpose: the domain's checks give
// the spec's exact error codes (invalid_type, invalid_iban, …) instead of a generic invalid_request.
import { z } from 'zod';
import {
  AccountTypeEnum,
  EanValidationEnum,
  MandateStatusEnum,
  PayoutHandlerEnum,
  RegistrationStatusEnum,
  Timestamp,
} from './onboarding-common.ts';

export const CreateAccountBody = z
  .object({
    type: z.unknown().optional().describe('particulier (default), zakelijk, vve'),
    display_name: z.unknown().optional().describe('string, trimmed to 120 characters'),
    cpo_external_ref: z.unknown().optional().describe('the CPO customer number; idempotency key; trimmed to 120 characters'),
    payout_handler: z.unknown().optional().describe('joulo_pays_customer (default) or via_cpo_invoicing'),
    iban: z.unknown().optional().describe('string or null; whitespace removed, upper-cased, 15–34 letters and digits; write-only'),
    person: z.unknown().optional().describe('{ full_name (required), email?, phone? }'),
    connection: z
      .unknown()
      .optional()
      .describe('{ ean_code (18 digits), street, house_number, postal_code, city, house_number_addition? }'),
  })
  .loose();

export const AccountSummary = z.object({
  id: z.uuid(),
  type: AccountTypeEnum,
  display_name: z.string().nullable(),
  payout_handler: PayoutHandlerEnum,
  cpo_external_ref: z.string().nullable(),
  created_at: Timestamp,
});

export const CreatedAccount = z.object({
  ok: z.boolean(),
  account_id: z.uuid(),
  connection_id: z.uuid(),
  location_id: z.uuid(),
  ean_validation_status: EanValidationEnum,
  iban_stored: z.boolean(),
  mandate_status: MandateStatusEnum,
  account: AccountSummary,
});

export const IdempotentAccount = z.object({
  ok: z.boolean(),
  idempotent: z.literal(true),
  account_id: z.uuid(),
  mandate_status: MandateStatusEnum,
  iban_stored: z.boolean(),
  account: AccountSummary,
});

export const ListAccountsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
  cpo_external_ref: z.string().optional(),
});

export const ListedConnection = z.object({
  connection_id: z.uuid(),
  ean_code: z.string(),
  status: z.enum(['active', 'archived']),
  registration_status: RegistrationStatusEnum,
  ean_validation_status: EanValidationEnum,
  mandate_status: MandateStatusEnum,
  mandate_valid_from: Timestamp.nullable(),
});

export const ListedAccount = z.object({
  id: z.uuid(),
  type: AccountTypeEnum,
  display_name: z.string().nullable(),
  cpo_external_ref: z.string().nullable(),
  payout_handler: PayoutHandlerEnum,
  created_at: Timestamp,
  access_channel: z.string(),
  signatory: z.object({ full_name: z.string().nullable(), email: z.string().nullable() }),
  connections: z.array(ListedConnection),
});

export const AccountList = z.object({
  accounts: z.array(ListedAccount),
  limit: z.number().int(),
  offset: z.number().int(),
  count: z.number().int(),
});
