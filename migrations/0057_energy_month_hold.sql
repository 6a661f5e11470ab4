-- C5.5 capacity hold (issue 12 item 5): a connection's monthly energy above CONNECTION_MAX_KW × the hours of the
-- Amsterdam month cannot have come through a household connection. The excess is held: it does not count
-- anywhere until an operator accepts it, and the month cannot be registered while the hold is open.
--   energy_months.kwh          what counts (the delivered energy less a held or rejected excess)
--   energy_months.held_wh      the excess above the connection's capacity, Wh (0 = none)
--   energy_months.hold_reason  why the month is held ('connection_capacity'), null = no hold
--   energy_months.hold_status  held (waits for the operator), accepted (the excess counts: kwh is the whole
--                              delivery) or rejected (the excess never counts); null = no hold
alter table energy_months
  add column held_wh bigint not null default 0 check (held_wh >= 0),
  add column hold_reason text null check (hold_reason in ('connection_capacity')),
  add column hold_status text null check (hold_status in ('held', 'accepted', 'rejected'));

-- the held months the operator's review lists
create index energy_months_held on energy_months(month) where hold_status = 'held';
