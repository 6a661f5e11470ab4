-- C4.8 process leases (ocpp area). Each running gateway process (its OCPP live registry) keeps one row here and
-- renews it every third of INSTANCE_LEASE_SECONDS. A charger's socket counts as open only while the process named
-- in its live-state row (ocpp_chargers.instance_id) holds a lease that has not expired, so the chargers of a
-- killed process read offline once its lease lapses, or at once when a restart on the same host recognises it.
-- Expiry is judged on the database's clock (now()), the one clock every process shares.
create table ocpp_instances (
  id text primary key,
  -- hostname, kernel boot id and pid namespace: a restart can judge only predecessors with the same host key
  host text not null,
  pid integer not null,
  started_at timestamptz not null default now(),
  renewed_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index ocpp_instances_host on ocpp_instances(host);

-- a clean stop marks the chargers it held disconnected by instance
create index ocpp_chargers_instance on ocpp_chargers(instance_id) where connected;
