-- D156: what each charger wrote to the quarantine, in bytes per hour. The gateway sums the last 24 hours before it
-- keeps an unusable message; past OCPP_QUARANTINE_BYTES_PER_DAY the message is refused (CALLERROR InternalError,
-- never acknowledged) instead of kept. One charger filled the disk at ~11 MB/s through the quarantine before. Counted
-- here, not per process, so the budget holds whichever process holds the charger's socket. A charger's rows older
-- than a day are deleted by its next quarantined message; the rows of a deleted charger go with it.
create table ocpp_quarantine_budget (
  charger_id uuid not null references chargers(id) on delete cascade,
  hour timestamptz not null,
  bytes bigint not null,
  primary key (charger_id, hour)
);
