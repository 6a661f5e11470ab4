// The partner tables: upload batches, drafts, referral codes, the outbox and e-mail suppressions (0030 and later).
import type { ColumnType, Generated, JSONColumnType } from 'kysely';
import type { NullableTimestamp } from './core.ts';

export type DraftStatus = 'open' | 'claiming' | 'claimed';
export type EanStatus = 'resolved' | 'candidates' | 'not_found' | 'invalid' | 'pending';
export type AddressIgnoredReason = 'invalid_postal_code' | 'invalid_house_number' | 'ean_mismatch';

export interface PartnerBatchesTable {
  id: Generated<string>;
  partner_id: string;
  endpoint: 'customers' | 'import';
  source: 'api' | 'csv';
  rows_received: number;
  rows_added: number;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface PartnerDraftsTable {
  id: Generated<string>;
  partner_id: string;
  batch_id: string;
  row_index: number;
  status: Generated<DraftStatus>;
  email: string;
  email_lower: string;
  name: string;
  type: Generated<'particulier' | 'zakelijk' | 'vve'>;
  company_name: string | null;
  contact_name: string | null;
  kvk: string | null;
  btw: string | null;
  external_ref: string | null;
  referral_code: string | null;
  referral_matched: Generated<boolean>;
  postal_code: string | null;
  house_number: string | null;
  house_number_addition: string | null;
  city: string | null;
  ean_code: string | null;
  ean_status: EanStatus;
  ean_candidates: JSONColumnType<string[], string | undefined, string>;
  address_ignored_reason: AddressIgnoredReason | null;
  charger_id: string | null;
  claim_token_hash: string;
  claimed_at: NullableTimestamp;
  claimed_user_id: string | null;
  claimed_account_id: string | null;
  claimed_connection_id: string | null;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface ReferralCodesTable {
  code: string;
  code_lower: string;
  description: string | null;
  created_at: Generated<Date>;
}

export type OutboxStatus = 'queued' | 'sending' | 'sent' | 'failed' | 'suppressed';

export interface OutboxMessagesTable {
  id: Generated<string>;
  to_email: string;
  subject: string;
  body: string;
  kind: Generated<string>;
  draft_id: string | null;
  unsubscribe_token: string;
  status: Generated<OutboxStatus>;
  attempts: Generated<number>;
  next_attempt_at: ColumnType<Date, Date | string | undefined, Date | string>;
  last_error: string | null;
  sent_at: NullableTimestamp;
  created_at: ColumnType<Date, Date | string | undefined, Date | string>;
  /** D170: when it failed for good (0075) */
  failed_at: NullableTimestamp;
  /** D172: when the secret part of its links was erased from the body (0075) */
  links_erased_at: NullableTimestamp;
}

export type SuppressionReason = 'bounce' | 'unsubscribe' | 'manual';

export interface EmailSuppressionsTable {
  email_lower: string;
  reason: SuppressionReason;
  detail: string | null;
  created_at: Generated<Date>;
  /** D171: who added it (0075): its owner through the unsubscribe link, the operator, delivery (a bounce); null before 0075 */
  source: SuppressionSource | null;
}

export type SuppressionSource = 'link' | 'operator' | 'delivery';

export interface PartnerTables {
  partner_batches: PartnerBatchesTable;
  partner_drafts: PartnerDraftsTable;
  referral_codes: ReferralCodesTable;
  outbox_messages: OutboxMessagesTable;
  email_suppressions: EmailSuppressionsTable;
}
