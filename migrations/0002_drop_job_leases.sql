-- Scheduled jobs take a PostgreSQL advisory lock per run (src/jobs/scheduler.ts, docs/platform.md), so the
-- lease table that 0001 created for node-cron's distributed mode is not used: drop it rather than keep dead state.
drop table if exists job_leases;
