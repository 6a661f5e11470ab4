-- A session that starts at the very instant its predecessor on the connector stopped, at the same register value
-- (a charger that splits a charge, or a stop and a start in one second), sends a start reading identical to the
-- stored stop reading: the same charger, connector, time, measurand, phase and Wh, which is the replay key of
-- meter_readings. The one row stays the earlier session's, so the new session had no reading at its start and
-- lost the energy up to its next reading. Such a session keeps its start value here; its energy and the ERE
-- counting read it as its first register point, at started_at. docs/decisions.md, D95.
alter table charging_sessions add column start_point_wh bigint;
