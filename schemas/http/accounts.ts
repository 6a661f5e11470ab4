// POST /v1/accounts and GET /v1/accounts (spec §4.1). The body is typed field by field; a field that fails names
// its spec error code through the one table in src/http/validation-codes.ts (invalid_type, invalid_iban, …). The
// keys are declared in the order the spec lists its errors, so the first failing field decides the code.
// The domain still normalises (trims, cuts to 120 characters, removes whitespace from the IBAN and EAN) and
// checks what depends on the environment (the EAN's check digit on production).
import { z } from 'zod';
import { EXAMPLE_EAN } from './common.ts';
import {
  AccountTypeEnum,
  EanValidationEnum,
  MandateStatusEnum,
  PayoutHandlerEnum,
  RegistrationStatusEnum,
  Timestamp,
} from './onboarding-common.ts';

const nonBlank = (error: string) => z.string({ error }).regex(/\S/, { error });
const optionalText = (field: string) => z.string({ error: `${field} must be a string.` }).nullish();

/** spec §4.1: whitespace removed, then 15 to 34 letters and digits; null or '' means absent. */
const IBAN_AS_SENT = /^\s*(?:[A-Za-z0-9]\s*){15,34}$|^\s*$/;
const IBAN_RULE = 'iban must be 15 to 34 letters and digits after removing whitespace.';

export const PersonInput = z
  .object({
    full_name: nonBlank('person.full_name is required.').describe('the natural person who signs the machtiging'),
    email: optionalText('person.email').describe('signatory e-mail'),
    phone: optionalText('person.phone').describe('signatory phone'),
  })
  .describe('the signatory of the machtiging');

/** An address field of a connection (also what POST /v1/connections:update documents). */
export const addressField = (name: string) =>
  z
    .union([z.string().regex(/\S/), z.number().int().positive()], { error: `connection.${name} is required.` })
    .describe(name === 'house_number' ? 'string, or a positive integer' : 'non-blank string');

export const ConnectionInput = z
  .object({
    ean_code: z
      .string({ error: 'connection.ean_code is required (18 digits).' })
      .describe('18 digits, Dutch (starts with 871); spaces are removed. Production also checks the GS1 check digit.'),
    street: addressField('street'),
    house_number: addressField('house_number'),
    postal_code: addressField('postal_code'),
    city: addressField('city'),
    house_number_addition: optionalText('connection.house_number_addition').describe('optional; null for none'),
  })
  .describe('the grid connection: EAN and address, checked against each other');

export const CreateAccountBody = z
  .object({
    type: z
      .enum(AccountTypeEnum.options, { error: `type must be one of ${AccountTypeEnum.options.join(', ')}.` })
      .nullish()
      .describe('particulier (default), zakelijk, vve'),
    payout_handler: z
      .enum(PayoutHandlerEnum.options, { error: `payout_handler must be one of ${PayoutHandlerEnum.options.join(', ')}.` })
      .nullish()
      .describe('joulo_pays_customer (default) or via_cpo_invoicing'),
    iban: z
      .string({ error: 'iban must be a string or null.' })
      .regex(IBAN_AS_SENT, { error: IBAN_RULE })
      .nullish()
      .describe('write-only; whitespace removed, upper-cased, then 15 to 34 letters and digits (no checksum test); null or "" means absent; needed for ERE eligibility'),
    person: PersonInput,
    connection: ConnectionInput,
    display_name: optionalText('display_name').describe('trimmed to 120 characters'),
    cpo_external_ref: optionalText('cpo_external_ref').describe(
      'your customer number: the idempotency key (a re-post returns the existing account), trimmed to 120 characters',
    ),
  })
  .meta({
    examples: [
      {
        type: 'particulier',
        display_name: 'Fam. de Vries',
        cpo_external_ref: 'CUST-10042',
        payout_handler: 'joulo_pays_customer',
        iban: 'NL91ABNA0417164300',
        person: { full_name: 'Anna de Vries', email: 'anna.devries@gmail.com', phone: '+31612345678' },
        connection: {
          ean_code: EXAMPLE_EAN,
          street: 'Keizersgracht',
          house_number: '12',
          house_number_addition: 'A',
          postal_code: '1015CJ',
          city: 'Amsterdam',
        },
      },
    ],
  });

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
  access_channel: z.enum(['cpo_api']).describe('how the account came in: in account lists always cpo_api (created through this API)'),
  signatory: z.object({ full_name: z.string().nullable(), email: z.string().nullable() }),
  connections: z.array(ListedConnection),
});

export const AccountList = z.object({
  accounts: z.array(ListedAccount),
  limit: z.number().int(),
  offset: z.number().int(),
  count: z.number().int(),
});
