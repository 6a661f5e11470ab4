-- Partner API (spec §4.2, C3): upload batches, claimable drafts, referral codes, the e-mail outbox and the
-- suppression list. PostgreSQL 15 compatible.

create table partner_batches (
  id uuid primary key default gen_random_uuid(),
  partner_id uuid not null references partners(id),
  endpoint text not null check (endpoint in ('customers', 'import')),
  source text not null check (source in ('api', 'csv')),
  rows_received integer not null,
  rows_added integer not null,
  created_at timestamptz not null default now()
);
create index partner_batches_partner on partner_batches(partner_id, created_at);

-- One claimable pre-registration of one customer (spec §2 Partner draft).
-- status: open → claimed. A claim first moves it to 'claiming' (an atomic update), so two confirmations of
-- one link can never both create a user or an account (C6.7).
create table partner_drafts (
  id uuid primary key default gen_random_uuid(),
  partner_id uuid not null references partners(id),
  batch_id uuid not null references partner_batches(id),
  row_index integer not null,
  status text not null default 'open' check (status in ('open', 'claiming', 'claimed')),
  email text not null,
  email_lower text not null,
  name text not null,
  type text not null default 'particulier' check (type in ('particulier', 'zakelijk', 'vve')),
  company_name text,
  contact_name text,
  kvk text,
  btw text,
  external_ref text,
  referral_code text,
  referral_matched boolean not null default false,
  postal_code text,
  house_number text,
  house_number_addition text,
  city text,
  ean_code text,
  ean_status text not null check (ean_status in ('resolved', 'candidates', 'not_found', 'invalid', 'pending')),
  ean_candidates jsonb not null default '[]'::jsonb,
  address_ignored_reason text
    check (address_ignored_reason in ('invalid_postal_code', 'invalid_house_number', 'ean_mismatch')),
  charger_id uuid references chargers(id),
  claim_token_hash text not null unique,
  claimed_at timestamptz,
  claimed_user_id uuid references users(id),
  claimed_account_id uuid references accounts(id),
  claimed_connection_id uuid references connections(id),
  created_at timestamptz not null default now()
);
-- C3.2 already_drafted: one open draft per e-mail address per partner (race-safe through ON CONFLICT).
create unique index partner_drafts_open_email on partner_drafts(partner_id, email_lower) where status <> 'claimed';
-- C3.2 conflict: an external_ref names one customer per partner.
create unique index partner_drafts_open_ref on partner_drafts(partner_id, external_ref)
  where external_ref is not null and status <> 'claimed';
-- C3.2 charger_claimed: a charger is coupled to at most one open draft.
create unique index partner_drafts_open_charger on partner_drafts(charger_id)
  where charger_id is not null and status <> 'claimed';
-- the rolling cap counts a partner's drafts by creation time
create index partner_drafts_partner_created on partner_drafts(partner_id, created_at);
create index partner_drafts_pending on partner_drafts(created_at) where ean_status = 'pending';
create index partner_drafts_ref on partner_drafts(partner_id, external_ref) where external_ref is not null;
create index partner_drafts_ean on partner_drafts(ean_code) where ean_code is not null;

-- Referral codes the operator knows (admin API); a row's code is reported as matched when listed here.
create table referral_codes (
  code text primary key,
  code_lower text not null unique,
  description text,
  created_at timestamptz not null default now()
);

-- C3.5: e-mail outbox. Queued by the request, delivered by the outbox-deliver job when SMTP_URL is set.
create table outbox_messages (
  id uuid primary key default gen_random_uuid(),
  to_email text not null,
  subject text not null,
  body text not null,
  kind text not null default 'claim_invite',
  draft_id uuid references partner_drafts(id),
  unsubscribe_token text not null unique,
  status text not null default 'queued' check (status in ('queued', 'sent', 'failed', 'suppressed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  last_error text,
  sent_at timestamptz,
  created_at timestamptz not null default now()
);
create index outbox_messages_due on outbox_messages(next_attempt_at) where status = 'queued';

-- C3.5: addresses that never get mail again (hard bounces, unsubscribes, operator entries).
create table email_suppressions (
  email_lower text primary key,
  reason text not null check (reason in ('bounce', 'unsubscribe', 'manual')),
  detail text,
  created_at timestamptz not null default now()
);
