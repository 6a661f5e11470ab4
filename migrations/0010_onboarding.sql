-- Onboarding area (issue 3): mandate links and signed mandates (C2.2, C2.3), the embedded EAN register (C2.7).
-- PostgreSQL 15 compatible.

-- C2.2: a signing link. The token is 256 random bits; only its SHA-256 is searchable, and the token itself is
-- kept encrypted (deps.cipher) so that an idempotent POST /v1/mandate-links can hand back the same URL.
create table mandate_links (
  id uuid primary key default gen_random_uuid(),
  connection_id uuid not null references connections(id),
  token_hash text not null unique,
  token_encrypted text not null,
  locale text not null default 'nl' check (locale in ('nl', 'en')),
  return_url text,
  clause_version text not null,
  expires_at timestamptz not null,
  signed_at timestamptz,
  created_at timestamptz not null default now()
);
create index mandate_links_connection on mandate_links(connection_id, created_at);

-- C2.3: the evidence of a signed machtiging. status 'revoked' after a correction with
-- acknowledge_mandate_lapses (spec §3).
create table mandates (
  id uuid primary key default gen_random_uuid(),
  connection_id uuid not null references connections(id),
  mandate_link_id uuid references mandate_links(id),
  channel text not null check (channel in ('signing_page', 'sandbox_helper')),
  signatory_name text not null,
  signatory_email text,
  signed_at timestamptz not null,
  clause_version text not null,
  clause_sha256 text not null,
  locale text not null,
  ean_code text not null,
  address text not null,
  client_ip text,
  user_agent text,
  status text not null default 'active' check (status in ('active', 'revoked')),
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);
-- one active machtiging per connection
create unique index mandates_active_connection on mandates(connection_id) where status = 'active';

-- C2.7: the embedded, table-backed EAN register (loaded through POST /admin/ean-register).
-- postal_code is stored normalised (upper case, no spaces); house_number_addition '' when absent.
create table ean_register_entries (
  ean_code text primary key,
  postal_code text not null,
  house_number text not null,
  house_number_addition text not null default '',
  loaded_at timestamptz not null default now()
);
create index ean_register_address on ean_register_entries(postal_code, house_number);
