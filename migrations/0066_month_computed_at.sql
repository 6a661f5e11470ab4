-- When a month's figures were last computed from the gateway's readings, on the database's clock: a registered
-- month is frozen at what that computation saw, so a session's readings that arrived later are not in it, nor an
-- operator's later decision on a held step, and the session views leave those Wh out of that month as the month
-- does (docs/decisions.md, D124). Rows written before this column get the best moment known: their last change, or
-- their registration if earlier; decisions taken before it count as taken before every computation.
alter table energy_months add column computed_at timestamptz not null default now();
update energy_months set computed_at = least(updated_at, registered_at);
alter table meter_readings add column reviewed_at timestamptz;
