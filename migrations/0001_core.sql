-- Core schema: credentials, partners, users, accounts and connections, catalog, chargers, charging data,
-- monthly energy, and the platform's own tables (rate limits, job leases). Later migrations extend it.
-- Kept to PostgreSQL 15 features: it runs on PGlite (PostgreSQL 18) and on a real PostgreSQL 15 server.

create table partners (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  rolling_days integer not null default 30,
  rolling_cap integer not null default 5000,
  fee_pct numeric(5,2),
  created_at timestamptz not null default now()
);

-- Partner API keys (spec §5, C1.3). Only a SHA-256 hash of the key is stored.
create table partner_api_keys (
  id uuid primary key default gen_random_uuid(),
  partner_id uuid not null references partners(id),
  key_hash text not null unique,
  key_hint text not null,
  environment text not null check (environment in ('sandbox', 'production')),
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);
create index partner_api_keys_partner on partner_api_keys(partner_id);

-- CPO clients (client credentials) and the access tokens minted for them (C1.1).
create table cpo_clients (
  id uuid primary key default gen_random_uuid(),
  partner_id uuid not null references partners(id),
  client_id text not null unique,
  secret_hash text not null,
  scopes text[] not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);

create table access_tokens (
  id uuid primary key default gen_random_uuid(),
  token_hash text not null unique,
  cpo_client_id uuid not null references cpo_clients(id),
  partner_id uuid not null references partners(id),
  scopes text[] not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);

create table users (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  full_name text,
  created_at timestamptz not null default now()
);
create unique index users_email on users(lower(email));

-- Personal API tokens (spec §5, C1.4).
create table personal_tokens (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users(id),
  token_hash text not null unique,
  scopes text[] not null,
  created_at timestamptz not null default now(),
  revoked_at timestamptz
);

-- Accounts (spec §2). access_channel: cpo_api (CPO API), partner_claim (claimed draft), personal.
create table accounts (
  id uuid primary key default gen_random_uuid(),
  partner_id uuid references partners(id),
  owner_user_id uuid references users(id),
  access_channel text not null default 'cpo_api',
  type text not null default 'particulier' check (type in ('particulier', 'zakelijk', 'vve')),
  display_name text,
  cpo_external_ref text,
  payout_handler text not null default 'joulo_pays_customer'
    check (payout_handler in ('joulo_pays_customer', 'via_cpo_invoicing')),
  iban_encrypted text,
  signatory_full_name text,
  signatory_email text,
  signatory_phone text,
  fee_pct numeric(5,2),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- spec §4.1 rule 1: cpo_external_ref is the idempotency key, unique per CPO partner.
create unique index accounts_partner_ref on accounts(partner_id, cpo_external_ref)
  where cpo_external_ref is not null;
create index accounts_owner on accounts(owner_user_id);

-- Connections (spec §2): EAN plus address, with the three state fields of §3.
create table connections (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts(id),
  location_id uuid not null default gen_random_uuid(),
  ean_code text not null,
  street text not null,
  house_number text not null,
  house_number_addition text,
  postal_code text not null,
  city text not null,
  status text not null default 'active' check (status in ('active', 'archived')),
  registration_status text not null default 'concept' check (registration_status in ('concept', 'ingediend')),
  ean_validation_status text not null default 'unverified'
    check (ean_validation_status in ('matched', 'mismatched', 'unverified')),
  mandate_status text not null default 'pending' check (mandate_status in ('pending', 'active')),
  mandate_valid_from timestamptz,
  ean_checked_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- spec §4.1 rule 4: an EAN belongs to one active connection service-wide.
create unique index connections_active_ean on connections(ean_code) where status = 'active';
create index connections_account on connections(account_id);

-- MID catalog (spec §2 Catalog model). Aliases hold what chargers report in BootNotification, normalised
-- to lower case with single spaces; match 'prefix' covers SKU families.
create table catalog_models (
  id uuid primary key default gen_random_uuid(),
  brand text not null,
  model text not null,
  mid_meter boolean not null,
  max_power_w integer not null default 22000,
  source_note text,
  created_at timestamptz not null default now()
);
create unique index catalog_models_brand_model on catalog_models(lower(brand), lower(model));

create table catalog_aliases (
  id uuid primary key default gen_random_uuid(),
  catalog_model_id uuid not null references catalog_models(id) on delete cascade,
  vendor text not null,
  model text not null,
  match text not null check (match in ('exact', 'prefix'))
);
create unique index catalog_aliases_unique on catalog_aliases(vendor, model, match);

-- Chargers: registered through the CPO API (serial + catalog model) or the Personal API (OCPP identity).
create table chargers (
  id uuid primary key default gen_random_uuid(),
  account_id uuid references accounts(id),
  owner_user_id uuid references users(id),
  partner_id uuid references partners(id),
  nickname text,
  connection_type text not null default 'ocpp',
  status text not null default 'active' check (status in ('active', 'removed')),
  serial_number text,
  catalog_model_id uuid references catalog_models(id),
  ocpp_vendor text,
  ocpp_model text,
  ocpp_identity text unique,
  password_hash text,
  mid_certified boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index chargers_account on chargers(account_id);
create index chargers_owner on chargers(owner_user_id);
create unique index chargers_account_serial on chargers(account_id, serial_number)
  where serial_number is not null and status = 'active';

-- Charging sessions (C4.6). transaction_id is the charger's (2.0.1) or the gateway-assigned integer (1.6).
create table charging_sessions (
  id uuid primary key default gen_random_uuid(),
  charger_id uuid not null references chargers(id),
  connector_id integer not null default 1,
  transaction_id text not null,
  id_tag text,
  started_at timestamptz not null,
  ended_at timestamptz,
  meter_start_wh bigint,
  meter_stop_wh bigint,
  last_meter_wh bigint,
  last_reading_at timestamptz,
  energy_wh bigint not null default 0,
  status text not null default 'active' check (status in ('active', 'completed')),
  end_provisional boolean not null default false,
  stop_reason text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (charger_id, transaction_id)
);
create index charging_sessions_charger_started on charging_sessions(charger_id, started_at);

-- Energy register readings in integer Wh (C4.5). A replay is the same (charger, timestamp, measurand,
-- phase, value) and is stored once.
create table meter_readings (
  id bigserial primary key,
  charger_id uuid not null references chargers(id),
  session_id uuid references charging_sessions(id),
  connector_id integer not null default 0,
  measured_at timestamptz not null,
  measurand text not null default 'Energy.Active.Import.Register',
  phase text not null default '',
  wh bigint not null,
  context text,
  signed_data text,
  anomaly text,
  received_at timestamptz not null default now()
);
create unique index meter_readings_replay on meter_readings(charger_id, measured_at, measurand, phase, wh);
create index meter_readings_session on meter_readings(session_id, measured_at);

-- Monthly energy per connection (C2.4): the one write path records here, from a CPO batch or OCPP.
create table energy_months (
  id uuid primary key default gen_random_uuid(),
  connection_id uuid not null references connections(id),
  month text not null check (month ~ '^\d{4}-(0[1-9]|1[0-2])$'),
  kwh numeric(14,2) not null check (kwh >= 0),
  wh bigint,
  sessions integer not null default 0,
  source text not null check (source in ('cpo', 'ocpp')),
  status text not null default 'delivered' check (status in ('delivered', 'in_review', 'registered', 'rejected')),
  registered_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (connection_id, month)
);

-- C1.5: rate-limit counters shared by every process.
create table rate_limits (
  key text primary key,
  count integer not null,
  window_start timestamptz not null,
  window_ms integer not null
);

-- node-cron distributed runs and job leases (one leader per tick).
create table job_leases (
  key text primary key,
  until timestamptz not null,
  holder text
);
