// zod contracts of the Partner API (spec §4.2, §2 Partner draft, C3), the claim page and the partner
// admin routes, shared by src/http/routes and the tests.
import { z } from 'zod';
import { SKIP_REASONS } from './partner-enums.ts';

const str = z.union([z.string(), z.number()]);

/** A draft row (spec §2): names matched case-insensitively; the aliases are listed in docs/partner.md. */
export const DraftRow = z
  .object({
    // not required per row: a row without a name or an e-mail address is answered in `rejected` (invalid)
    name: z.string().optional().describe('required for a draft (a row without it is rejected as invalid); alias: naam'),
    email: z.string().optional().describe('required for a draft (a row without it is rejected as invalid); aliases: emailadres, mail'),
    type: z.string().optional().describe('particulier (default), zakelijk, vve; alias: soort'),
    company_name: z.string().optional().describe('aliases: bedrijfsnaam, bedrijf, company'),
    contact_name: z.string().optional().describe('aliases: contactpersoon, contact'),
    kvk: str.optional().describe('8 digits; required for type zakelijk; alias: kvknummer'),
    btw: z.string().optional().describe('NL + 9 digits + B + 2 digits; aliases: btwnummer, vat'),
    ean: str.optional().describe('18 digits, starts with 871, GS1 check digit; alias: eancode'),
    external_ref: str.optional().describe('aliases: customer_ref, klantnummer, referentie, extref'),
    referral_code: z.string().optional().describe('aliases: referral, vriendencode'),
    postal_code: z.string().optional().describe('1234 AB; aliases: postcode, zip, zipcode'),
    house_number: str.optional().describe('aliases: huisnummer'),
    house_number_addition: z.string().optional().describe('aliases: toevoeging, huisnummertoevoeging, house_number_suffix'),
    city: z.string().optional().describe('aliases: plaats, woonplaats, stad'),
    charger_brand: z.string().optional().describe('JSON rows only: couple a charger registered by this partner (with charger_serial)'),
    charger_serial: z.string().optional().describe('JSON rows only: serial number of that charger'),
  })
  .loose();

export const CustomersBody = z.object({
  consent: z.boolean().describe('must be true'),
  customers: z.array(DraftRow).min(1),
  send_invite: z.boolean().optional().describe('default true: e-mail each customer the claim link'),
});

export const ImportBody = z.object({
  consent: z.boolean().describe('must be true'),
  rows: z.array(DraftRow).optional().describe('when present, csv is ignored'),
  csv: z
    .string()
    .optional()
    .describe('CSV text with a header row; comma or semicolon separated; quotes, BOM and CRLF allowed; cannot couple a charger'),
  source: z.string().optional().describe('"csv" (default) or "api"; only "api" looks EANs up during the request'),
  send_invite: z.boolean().optional(),
});

export const EanStatus = z.enum(['resolved', 'candidates', 'not_found', 'invalid', 'pending']);
// C3.2: one list of reasons (partner-enums.ts), which the domain counts by
export const SkipReason = z.enum(SKIP_REASONS);

// D210: an empty or malformed e-mail cannot say which row it was; the row's position does
const RowNumber = z
  .number()
  .int()
  .min(1)
  .describe(
    'the row\'s 1-based position in the request: for customers and rows the array index + 1; for csv the data row, the first record after the header being 1 (a blank line counts, a quoted field spanning lines does not)',
  );

export const UploadResponse = z.object({
  ok: z.boolean(),
  added: z.number().int(),
  batch_id: z.uuid(),
  created: z.array(
    z.object({
      draft_id: z.uuid(),
      email: z.string(),
      external_ref: z.string().nullable(),
      claim_url: z.string(),
      ean_status: EanStatus,
      ean_candidates: z.number().int(),
    }),
  ),
  address_ignored: z.array(
    z.object({
      email: z.string(),
      reason: z.enum(['invalid_postal_code', 'invalid_house_number', 'ean_mismatch']),
      row: RowNumber,
    }),
  ),
  claim_urls: z.array(z.object({ email: z.string(), claim_url: z.string() })),
  referral_codes: z.array(z.object({ email: z.string(), code: z.string(), matched: z.boolean() })),
  rejected: z.array(z.object({ email: z.string(), reason: SkipReason, row: RowNumber })),
  skipped: z.object(Object.fromEntries(SkipReason.options.map((k) => [k, z.number().int()])) as Record<z.infer<typeof SkipReason>, z.ZodNumber>),
  cap: z.object({ rolling_days: z.number().int(), rolling_cap: z.number().int(), remaining_before: z.number().int() }),
});

export const PartnerError = z
  .object({ error: z.string(), detail: z.string().optional(), message: z.string().optional() })
  .loose();

export const ReferralCodesBody = z
  .object({ codes: z.array(z.string()).optional(), code: z.string().optional(), description: z.string().optional() })
  .loose();
export const ReferralCodesResponse = z.object({ added: z.number().int(), codes: z.array(z.string()) });

export const SuppressionBody = z
  .object({ email: z.string(), reason: z.enum(['bounce', 'unsubscribe', 'manual']).optional() })
  .loose();
export const SuppressionResponse = z.object({
  ok: z.literal(true),
  email: z.string(),
  reason: z.string().describe('the stored entry\'s reason: an address already on the list keeps its first one (D173)'),
  created: z.boolean().describe('true (201) when this request added the entry; false (200) when the address was on the list already'),
});

export const OutboxStatus = z.enum(['queued', 'sending', 'sent', 'failed', 'suppressed']);

export const OutboxResponse = z.object({
  messages: z.array(
    z.object({
      id: z.string().describe('the message\'s id (POST /admin/outbox/{id}/requeue)'),
      to: z.string(),
      subject: z.string(),
      body: z.string().describe('the text; the secret part of every link (claim, sign-in, confirmation, unsubscribe) reads … (D172)'),
      kind: z.string().describe('claim_invite, or the transactional dashboard_sign_in and claim_link_confirm (D171)'),
      created_at: z.string(),
      status: OutboxStatus.describe('sending: being handed to the SMTP server (D169)'),
      attempts: z.number().int().describe('attempts since it was queued (or requeued)'),
      last_error: z.string().nullable().describe('the SMTP server\'s answer (or the failure) of the last failed attempt'),
      next_attempt_at: z.string().nullable().describe('when a queued message is next tried; null in every other status'),
      sent_at: z.string().nullable(),
      failed_at: z.string().nullable().describe('when it failed for good'),
    }),
  ),
});

export const HtmlPage = z.string().describe('text/html page');
