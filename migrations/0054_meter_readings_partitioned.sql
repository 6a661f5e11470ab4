-- meter_readings partitioned by month (UTC calendar months of measured_at). A fleet writes billions of readings a
-- year: the hot path writes into the current month's partition, the aggregation reads the months it recomputes,
-- and old months stay attached and queryable (signed MID readings are evidence; nothing is dropped).
-- Partitions ahead are created by the `partitions` job (src/jobs/partitions.job.ts); a reading outside every
-- created month (a charger with a wrong clock) lands in meter_readings_default, and the job moves such rows into
-- their month's partition when it creates it.
-- Kept to PostgreSQL 15 features (and PGlite).

alter table meter_readings rename to meter_readings_unpartitioned;
alter index meter_readings_pkey rename to meter_readings_unpartitioned_pkey;
alter index meter_readings_replay rename to meter_readings_unpartitioned_replay;
alter index meter_readings_session rename to meter_readings_unpartitioned_session;
alter index meter_readings_received_at rename to meter_readings_unpartitioned_received_at;
-- the id sequence outlives the old table
alter sequence meter_readings_id_seq owned by none;

create table meter_readings (
  id bigint not null default nextval('meter_readings_id_seq'),
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
  received_at timestamptz not null default now(),
  -- a partitioned table's unique keys include the partition key
  primary key (id, measured_at)
) partition by range (measured_at);
alter sequence meter_readings_id_seq owned by meter_readings.id;

-- the replay key (charger, connector, time, measurand, phase, value) holds across the table: measured_at is in it
create unique index meter_readings_replay on meter_readings(charger_id, connector_id, measured_at, measurand, phase, wh);
create index meter_readings_session on meter_readings(session_id, measured_at);
create index meter_readings_received_at on meter_readings(received_at);

create table meter_readings_default partition of meter_readings default;

-- A partition for every month of the last ten years that holds readings, and for this month and three ahead;
-- anything else (wrong clocks) goes to the default partition.
do $$
declare
  m timestamp;
begin
  for m in
    select distinct date_trunc('month', measured_at at time zone 'UTC')
      from meter_readings_unpartitioned
     where measured_at >= date_trunc('month', now() at time zone 'UTC') - interval '10 years'
       and measured_at < date_trunc('month', now() at time zone 'UTC') + interval '4 months'
    union
    select date_trunc('month', now() at time zone 'UTC') + make_interval(months => k) from generate_series(0, 3) as k
  loop
    execute format(
      'create table %I partition of meter_readings for values from (%L) to (%L)',
      'meter_readings_' || to_char(m, 'YYYY_MM'),
      (m at time zone 'UTC'),
      ((m + interval '1 month') at time zone 'UTC')
    );
  end loop;
end
$$;

insert into meter_readings (id, charger_id, session_id, connector_id, measured_at, measurand, phase, wh, context, signed_data, anomaly, received_at)
select id, charger_id, session_id, connector_id, measured_at, measurand, phase, wh, context, signed_data, anomaly, received_at
  from meter_readings_unpartitioned;

drop table meter_readings_unpartitioned;
