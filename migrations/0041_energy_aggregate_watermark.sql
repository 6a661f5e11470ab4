-- C4.7 incremental aggregation (energy area). The energy-aggregate run recomputes only the (connection, month)
-- pairs whose inputs changed since the last successful run; see docs/energy.md "OCPP aggregation".
-- Kept to PostgreSQL 15 features.

-- One row: the watermark of the last successful run (database time of the run's start minus a safety margin),
-- written in the same transaction as the results. No row = the next run is a full recompute.
create table energy_aggregate_watermark (
  id integer primary key default 1 check (id = 1),
  since timestamptz not null,
  now_month text not null,
  updated_at timestamptz not null default now()
);

-- Per aggregated connection: the fingerprint of what decides which sessions count (the connection's account and
-- its MID charger ids) and the months skipped because they lay in the future (picked up when they arrive).
-- A connection whose fingerprint differs (or has no row) is recomputed over its whole history.
create table energy_aggregate_connections (
  connection_id uuid primary key references connections(id),
  fingerprint text not null,
  pending_from text,
  pending_to text,
  updated_at timestamptz not null default now()
);

-- What changed since the watermark: sessions by updated_at, readings by received_at (offline batches).
create index charging_sessions_updated_at on charging_sessions(updated_at);
create index meter_readings_received_at on meter_readings(received_at);
