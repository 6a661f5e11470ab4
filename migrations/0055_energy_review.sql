-- C5.5 held energy (issue 12 item 2). A register step ending at a reading q counts iff the step is positive and
-- (q.anomaly is null or q.review = 'accepted'); see src/domain/charging/readings.ts stepCounts.
--   meter_readings.review     the operator's decision on the flagged step ending at this reading (null = none yet)
--   meter_readings.power_w    the Power.Active.Import the charger reported in the same meter value, W (null = none):
--                             the evidence for register_too_slow (a kWh value sent as Wh)
--   charging_sessions.held_wh the Wh of flagged steps not decided yet; energy_wh stays the counted Wh
--   charging_sessions.review_status / review_reason
--                             held (a flagged step waits for the operator), accepted or rejected (all decided);
--                             the reasons as a sorted comma-separated list; both null when nothing was flagged
--   charging_sessions.last_power_w
--                             power_w of the session's last register reading (the incremental update continues
--                             from it, as it does from last_meter_wh)
-- meter_readings is partitioned: the columns and the check are added on the parent and reach every partition.
alter table meter_readings
  add column review text null check (review in ('accepted', 'rejected')),
  add column power_w integer null;

alter table charging_sessions
  add column held_wh bigint not null default 0,
  add column review_status text null check (review_status in ('held', 'accepted', 'rejected')),
  add column review_reason text null,
  add column last_power_w integer null;

-- Sessions flagged before this migration: their flagged steps were held out of energy_wh and wait for review.
with steps as (
  select session_id, anomaly,
         wh - lag(wh) over (partition by session_id order by measured_at, id) as step
    from meter_readings
   where measurand = 'Energy.Active.Import.Register' and phase = ''
     and session_id in (select session_id from meter_readings where anomaly is not null and session_id is not null)
),
held as (
  select session_id,
         coalesce(sum(step) filter (where step > 0), 0) as wh,
         string_agg(distinct anomaly, ',' order by anomaly) as reasons
    from steps
   where anomaly is not null
   group by session_id
)
update charging_sessions s
   set held_wh = held.wh, review_status = 'held', review_reason = held.reasons
  from held
 where s.id = held.session_id;

-- the held sessions an operator lists
create index charging_sessions_held on charging_sessions(started_at) where review_status = 'held';
