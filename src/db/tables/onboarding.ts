// The onboarding tables: mandates and mandate links, the embedded EAN register (migrations 0010 and later).
import type { Generated } from 'kysely';
import type { NullableTimestamp, Timestamp } from './core.ts';

export interface MandateLinksTable {
  id: Generated<string>;
  connection_id: string;
  token_hash: string;
  token_encrypted: string;
  locale: Generated<'nl' | 'en'>;
  return_url: string | null;
  clause_version: string;
  expires_at: Timestamp;
  signed_at: NullableTimestamp;
  /** set when a revocation voided the link (migrations/0058_mandate_link_voided.sql) */
  voided_at: NullableTimestamp;
  created_at: Generated<Date>;
}

export interface MandatesTable {
  id: Generated<string>;
  connection_id: string;
  mandate_link_id: string | null;
  channel: 'signing_page' | 'sandbox_helper';
  signatory_name: string;
  signatory_email: string | null;
  signed_at: Timestamp;
  clause_version: string;
  clause_sha256: string;
  locale: string;
  ean_code: string;
  address: string;
  client_ip: string | null;
  user_agent: string | null;
  status: Generated<'active' | 'revoked'>;
  revoked_at: NullableTimestamp;
  created_at: Generated<Date>;
}

export interface EanRegisterEntriesTable {
  ean_code: string;
  postal_code: string;
  house_number: string;
  house_number_addition: Generated<string>;
  loaded_at: Generated<Date>;
}

export interface OnboardingTables {
  mandate_links: MandateLinksTable;
  mandates: MandatesTable;
  ean_register_entries: EanRegisterEntriesTable;
}
