// The accounts, credentials, chargers, sessions, readings and monthly energy (migrations/0001_core.sql and the columns
// later migrations add to them). pg returns int8/numeric as strings, timestamptz as Date.
import type { ColumnType, Generated } from 'kysely';

export type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
export type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
export type Int8 = ColumnType<string, string | number | bigint, string | number | bigint>;
export type NullableInt8 = ColumnType<string | null, string | number | bigint | null | undefined, string | number | bigint | null>;
export type Numeric = ColumnType<string, string | number, string | number>;
export type NullableNumeric = ColumnType<string | null, string | number | null | undefined, string | number | null>;

export interface PartnersTable {
  id: Generated<string>;
  name: string;
  rolling_days: Generated<number>;
  rolling_cap: Generated<number>;
  fee_pct: NullableNumeric;
  created_at: Generated<Date>;
}

export interface PartnerApiKeysTable {
  id: Generated<string>;
  partner_id: string;
  key_hash: string;
  key_hint: string;
  environment: 'sandbox' | 'production';
  created_at: Generated<Date>;
  revoked_at: NullableTimestamp;
}

export interface CpoClientsTable {
  id: Generated<string>;
  partner_id: string;
  client_id: string;
  secret_hash: string;
  scopes: string[];
  created_at: Generated<Date>;
  revoked_at: NullableTimestamp;
}

export interface AccessTokensTable {
  id: Generated<string>;
  token_hash: string;
  cpo_client_id: string;
  partner_id: string;
  scopes: string[];
  expires_at: Timestamp;
  created_at: Generated<Date>;
  revoked_at: NullableTimestamp;
}

export interface UsersTable {
  id: Generated<string>;
  email: string;
  full_name: string | null;
  created_at: Generated<Date>;
}

export interface PersonalTokensTable {
  id: Generated<string>;
  user_id: string;
  token_hash: string;
  scopes: string[];
  created_at: Generated<Date>;
  revoked_at: NullableTimestamp;
  /** migrations/0060: the name the owner gave it on the dashboard, the secret's last characters, its last use */
  name: ColumnType<string | null, string | null | undefined, string | null>;
  hint: ColumnType<string | null, string | null | undefined, string | null>;
  last_used_at: NullableTimestamp;
}

export type AccountType = 'particulier' | 'zakelijk' | 'vve';
export type PayoutHandler = 'joulo_pays_customer' | 'via_cpo_invoicing';

export interface AccountsTable {
  id: Generated<string>;
  partner_id: string | null;
  owner_user_id: string | null;
  access_channel: Generated<'cpo_api' | 'partner_claim' | 'personal'>;
  type: Generated<AccountType>;
  display_name: string | null;
  cpo_external_ref: string | null;
  payout_handler: Generated<PayoutHandler>;
  iban_encrypted: string | null;
  signatory_full_name: string | null;
  signatory_email: string | null;
  signatory_phone: string | null;
  fee_pct: NullableNumeric;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ConnectionsTable {
  id: Generated<string>;
  account_id: string;
  location_id: Generated<string>;
  ean_code: string;
  street: string;
  house_number: string;
  house_number_addition: string | null;
  postal_code: string;
  city: string;
  status: Generated<'active' | 'archived'>;
  registration_status: Generated<'concept' | 'ingediend'>;
  ean_validation_status: Generated<'matched' | 'mismatched' | 'unverified'>;
  mandate_status: Generated<'pending' | 'active'>;
  mandate_valid_from: NullableTimestamp;
  ean_checked_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface CatalogModelsTable {
  id: Generated<string>;
  brand: string;
  model: string;
  mid_meter: boolean;
  max_power_w: Generated<number>;
  source_note: string | null;
  created_at: Generated<Date>;
}

export interface CatalogAliasesTable {
  id: Generated<string>;
  catalog_model_id: string;
  vendor: string;
  model: string;
  match: 'exact' | 'prefix' | 'pattern';
}

/** A bundled catalog model a start has offered to this database (migration 0080, D209): lower-case brand and model. */
export interface CatalogOfferedModelsTable {
  brand: string;
  model: string;
  offered_at: Generated<Date>;
}

/** A bundled catalog alias a start has offered to this database (migration 0080, D209): as catalog_aliases keys it. */
export interface CatalogOfferedAliasesTable {
  vendor: string;
  model: string;
  match: 'exact' | 'prefix' | 'pattern';
  offered_at: Generated<Date>;
}

export interface ChargersTable {
  id: Generated<string>;
  account_id: string | null;
  owner_user_id: string | null;
  partner_id: string | null;
  nickname: string | null;
  connection_type: Generated<'ocpp' | 'cloud_api'>;
  status: Generated<'active' | 'removed'>;
  serial_number: string | null;
  catalog_model_id: string | null;
  ocpp_vendor: string | null;
  ocpp_model: string | null;
  ocpp_identity: string | null;
  password_hash: string | null;
  /** issue 10 item 8: a rotated password the charger accepted but has not connected with yet (hash) */
  pending_password_hash: Generated<string | null>;
  password_changed_at: Generated<Date | null>;
  mid_certified: Generated<boolean>;
  /** C5.5 (migrations/0056): the registered public key of the charger's signing meter, DER SPKI in upper-case hex */
  ocmf_public_key: Generated<string | null>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ChargingSessionsTable {
  id: Generated<string>;
  charger_id: string;
  connector_id: Generated<number>;
  transaction_id: string;
  id_tag: string | null;
  started_at: Timestamp;
  ended_at: NullableTimestamp;
  meter_start_wh: NullableInt8;
  meter_stop_wh: NullableInt8;
  last_meter_wh: NullableInt8;
  last_reading_at: NullableTimestamp;
  /** migrations/0061: the time of the session's first register reading (null while it has none); its last is last_reading_at */
  first_reading_at: NullableTimestamp;
  energy_wh: ColumnType<string, string | number | bigint | undefined, string | number | bigint>;
  status: Generated<'active' | 'completed'>;
  end_provisional: Generated<boolean>;
  stop_reason: string | null;
  /** C5.5 (migrations/0055): Wh of flagged steps not decided yet, and the review of the flagged steps */
  held_wh: ColumnType<string, string | number | bigint | undefined, string | number | bigint>;
  review_status: Generated<'held' | 'accepted' | 'rejected' | null>;
  /** the reasons, sorted and comma-separated */
  review_reason: Generated<string | null>;
  /** power_w of the last register reading */
  last_power_w: Generated<number | null>;
  /** D176 (migrations/0078): the last register reading is a doubtful value not accepted, so no base for the next step */
  ends_doubtful: Generated<boolean>;
  created_at: Generated<Date>;
  /**
   * now() of the session's last write, except the writes that only bring a running session's readings up to date
   * (migrations/0062): those stamp metered_at alone, so that the row's indexed columns stay as they were
   */
  updated_at: Generated<Date>;
  /** migrations/0062: now() of the last write of the session's readings (its energy, last reading, power); not indexed */
  metered_at: Generated<Date>;
  /**
   * migrations/0064: the session's start value when its start reading is stored as another session's (the same
   * instant and Wh as the stop before it): its first register point, at started_at
   */
  start_point_wh: Generated<string | null>;
  /** migrations/0065: 0, then 1, 2, … for a transaction id a charger reused after the session it named ended (D99) */
  transaction_generation: Generated<number>;
}

export interface MeterReadingsTable {
  id: Generated<string>;
  charger_id: string;
  session_id: string | null;
  connector_id: Generated<number>;
  measured_at: Timestamp;
  measurand: Generated<string>;
  phase: Generated<string>;
  wh: Int8;
  context: string | null;
  signed_data: string | null;
  /** C5.5 (migrations/0056): the verdict on signed_data; null = not signed (or signed before 0056: never checked) */
  signature_status: Generated<'verified' | 'unverified' | 'invalid' | null>;
  anomaly: string | null;
  /** C5.5: the operator's decision on the flagged step ending here (migrations/0055) */
  review: Generated<'accepted' | 'rejected' | null>;
  /** migrations/0066: when the operator decided `review` (the database's clock, D124) */
  reviewed_at: NullableTimestamp;
  /** Power.Active.Import reported with this reading, W */
  power_w: Generated<number | null>;
  received_at: Generated<Date>;
}

export type EnergyMonthStatus = 'delivered' | 'in_review' | 'registered' | 'rejected';

export interface EnergyMonthsTable {
  id: Generated<string>;
  connection_id: string;
  month: string;
  kwh: Numeric;
  wh: NullableInt8;
  sessions: Generated<number>;
  source: 'cpo' | 'ocpp';
  status: Generated<EnergyMonthStatus>;
  registered_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  /** migrations/0040: the month's ERE once reviewed, and its review */
  ere: ColumnType<string | null, string | number | null | undefined, string | number | null>;
  review_started_at: NullableTimestamp;
  rejected_at: NullableTimestamp;
  review_note: ColumnType<string | null, string | null | undefined, string | null>;
  /** migrations/0057: the excess above the connection's capacity, Wh, and its hold (C5.5) */
  held_wh: ColumnType<string, string | number | bigint | undefined, string | number | bigint>;
  hold_reason: ColumnType<'connection_capacity' | null, 'connection_capacity' | null | undefined, 'connection_capacity' | null>;
  hold_status: ColumnType<'held' | 'accepted' | 'rejected' | null, 'held' | 'accepted' | 'rejected' | null | undefined, 'held' | 'accepted' | 'rejected' | null>;
  /** migrations/0066: when its figures were last computed from the readings (the database's clock, D124) */
  computed_at: Generated<Date>;
}

export interface RateLimitsTable {
  key: string;
  count: number;
  window_start: Timestamp;
  window_ms: number;
}

/** migrations/0070: the last run of each job (D146) */
export interface JobRunsTable {
  job: string;
  trigger: 'schedule' | 'admin';
  started_at: Timestamp;
  finished_at: Timestamp;
  outcome: 'ok' | 'failed';
  result: ColumnType<unknown, string | null, string | null>;
  error: string | null;
  last_ok_at: NullableTimestamp;
}

/** migrations/0073: the scheduled moments claimed by a process (D162) */
export interface JobSlotsTable {
  key: string;
  claimed_at: Generated<Date>;
}

/** migrations/0081: the one-time repairs that ran to their end on this database (D215) */
export interface BackfillsTable {
  name: string;
  done_at: Generated<Date>;
  result: ColumnType<unknown, string | null, string | null>;
}

export interface CoreTables {
  partners: PartnersTable;
  partner_api_keys: PartnerApiKeysTable;
  cpo_clients: CpoClientsTable;
  access_tokens: AccessTokensTable;
  users: UsersTable;
  personal_tokens: PersonalTokensTable;
  accounts: AccountsTable;
  connections: ConnectionsTable;
  catalog_models: CatalogModelsTable;
  catalog_aliases: CatalogAliasesTable;
  catalog_offered_models: CatalogOfferedModelsTable;
  catalog_offered_aliases: CatalogOfferedAliasesTable;
  chargers: ChargersTable;
  charging_sessions: ChargingSessionsTable;
  meter_readings: MeterReadingsTable;
  energy_months: EnergyMonthsTable;
  rate_limits: RateLimitsTable;
  job_runs: JobRunsTable;
  job_slots: JobSlotsTable;
  backfills: BackfillsTable;
}
