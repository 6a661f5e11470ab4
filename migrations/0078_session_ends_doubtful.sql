-- D176 (docs/decisions.md): a register reading whose own value is doubtful (an invalid signature, a timestamp ahead of
-- the gateway's clock) and not accepted is no base for the next step. A session that ends at such a reading cannot be
-- continued from its last reading (last_meter_wh): its next reading is folded with all the others. This column says
-- so, set wherever the session's energy is written.
alter table charging_sessions add column ends_doubtful boolean not null default false;

-- sessions stored before, whose last register reading is such a value
update charging_sessions s
   set ends_doubtful = true
 where s.last_reading_at is not null
   and exists (
     select 1 from meter_readings r
      where r.session_id = s.id
        and r.charger_id = s.charger_id
        and r.measured_at = s.last_reading_at
        and r.measurand = 'Energy.Active.Import.Register'
        and r.phase = ''
        and (r.signature_status = 'invalid' or r.anomaly = 'future_timestamp')
        and r.review is distinct from 'accepted');
