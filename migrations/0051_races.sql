-- Issue 10 item 7 (races closed). Kept to PostgreSQL 15 features.

-- C4.5 replay key with the connector: two connectors of one charger reporting equal readings (same timestamp,
-- measurand, phase and value) are two readings, not one replay. The new key is finer than the old one, so the
-- rows already stored satisfy it. Built under a temporary name, then it takes the old index's name.
create unique index meter_readings_replay_connector
  on meter_readings(charger_id, connector_id, measured_at, measurand, phase, wh);
drop index meter_readings_replay;
alter index meter_readings_replay_connector rename to meter_readings_replay;

-- The claim flow now runs in one transaction, so `claiming` is never committed any more. A draft left in
-- `claiming` by the earlier multi-step flow (a crash or an error between its steps) is opened again, so its
-- customer can claim it instead of seeing "already claimed" forever.
update partner_drafts set status = 'open' where status = 'claiming';
