-- OCPP gateway (C4): per-charger gateway state, id tokens, quarantine, remote commands, 1.6 transaction ids.

-- One row per OCPP charger: boot facts (C4.3), operator settings (C4.4) and live state (C4.8).
-- Live state lives here, not in memory, so every process can answer GET /chargers for every charger.
create table ocpp_chargers (
  charger_id uuid primary key references chargers(id),
  registration_status text not null default 'Accepted' check (registration_status in ('Accepted', 'Pending', 'Rejected')),
  auth_policy text not null default 'accept_all' check (auth_policy in ('accept_all', 'list')),
  protocol text,
  serial_number text,
  firmware_version text,
  boot_reason text,
  boot_at timestamptz,
  -- C4.2: set when the gateway answered a BootNotification (Accepted or Pending); survives reconnects
  boot_answered_at timestamptz,
  connected boolean not null default false,
  connection_id text,
  instance_id text,
  connected_at timestamptz,
  disconnected_at timestamptz,
  last_seen_at timestamptz,
  connector_status jsonb not null default '{}'::jsonb,
  updated_at timestamptz not null default now()
);

-- C4.4 id tokens of a charger with auth_policy 'list'.
create table ocpp_id_tokens (
  charger_id uuid not null references chargers(id),
  id_token text not null,
  status text not null check (status in ('Accepted', 'Blocked', 'Expired', 'Invalid')),
  expires_at timestamptz,
  primary key (charger_id, id_token)
);

-- C4.1: transaction messages that could not be used are acknowledged and kept here verbatim for review.
create table ocpp_quarantine (
  id bigserial primary key,
  charger_id uuid not null references chargers(id),
  protocol text not null,
  action text not null,
  message_id text,
  payload jsonb not null,
  reason text not null,
  received_at timestamptz not null default now()
);
create index ocpp_quarantine_charger on ocpp_quarantine(charger_id, received_at);

-- C6.6 remote commands, also the hand-over between processes: the process holding the charger's socket
-- executes pending rows addressed to its instance and writes the answer back.
create table ocpp_commands (
  id uuid primary key default gen_random_uuid(),
  charger_id uuid not null references chargers(id),
  instance_id text not null,
  action text not null,
  payload jsonb not null,
  status text not null default 'pending' check (status in ('pending', 'sent', 'answered', 'failed', 'timeout')),
  response jsonb,
  error text,
  created_at timestamptz not null default now(),
  answered_at timestamptz
);
create index ocpp_commands_pending on ocpp_commands(instance_id, status) where status = 'pending';

-- C4.6: gateway-assigned OCPP 1.6 transaction ids, unique across the whole service (int32 for the charger).
create sequence ocpp16_transaction_id_seq as integer start with 1000 maxvalue 2147483647 cycle;
