-- One-time repairs of stored data that a release runs after its upgrade, in the background (src/jobs: a job with
-- `atStart`), once per database whatever the number of processes: a row here says the repair ran to its end, so
-- every later start, of any process, finds it done. docs/decisions.md, D215.
create table backfills (
  name text primary key,
  done_at timestamptz not null default now(),
  -- what the run did, as its job returned it
  result jsonb
);

-- D215 (doubtful-backfill): the sessions stored before D176 whose readings include a doubtful value are recomputed
-- once. A database that holds no session yet has nothing stored under the old rule: it is done from the start.
insert into backfills (name, result)
select 'doubtful-backfill', '{"sessions_checked": 0, "sessions_changed": 0, "reason": "no sessions at the upgrade"}'::jsonb
 where not exists (select 1 from charging_sessions);
