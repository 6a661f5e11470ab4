-- The last run of each scheduled job, whichever process ran it: the operator's `GET /admin/jobs` showed only names
-- and crons, and what a run did was only in that process's log (D142). One row per job, replaced by every run that
-- took the job's lock (scheduled or by hand), written while the lock is held. docs/decisions.md, D146.
create table job_runs (
  job text primary key,
  trigger text not null check (trigger in ('schedule', 'admin')),
  started_at timestamptz not null,
  finished_at timestamptz not null,
  outcome text not null check (outcome in ('ok', 'failed')),
  result jsonb,
  error text,
  last_ok_at timestamptz
);
