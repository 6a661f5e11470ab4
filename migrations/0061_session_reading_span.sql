-- A session's register readings span first_reading_at .. last_reading_at (the phase-less
-- Energy.Active.Import.Register readings, the ones its energy is counted from). last_reading_at was kept already;
-- with the first one beside it, a lookup of a session's readings names the months they lie in, so the planner reads
-- (and locks) only those partitions of meter_readings, and the questions "does this session have a reading in this
-- month" or "which months do its readings span" are answered from the session row without reading any reading.
-- Both are null while a session has no register reading; every write that changes a session's register readings
-- sets both (src/domain/charging/readings.ts, batch.ts, batch-starts.ts).
alter table charging_sessions add column first_reading_at timestamptz;

update charging_sessions s
   set first_reading_at = r.first
  from (select session_id, min(measured_at) as first
          from meter_readings
         where session_id is not null and measurand = 'Energy.Active.Import.Register' and phase = ''
         group by session_id) r
 where r.session_id = s.id;

-- The aggregation found the sessions with readings received since its last run by meter_readings.received_at, which
-- probed every month's partition on every run. Every write of a session's readings also stamps the session's
-- updated_at, which the aggregation reads anyway, so the index served nothing else and only cost every insert.
drop index if exists meter_readings_received_at;
