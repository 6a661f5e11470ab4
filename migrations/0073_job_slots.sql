-- One run per scheduled moment across processes and machines: node-cron asks a run coordinator before each
-- scheduled run, with a key naming the job and the moment (e.g. `ere:draft-ean-lookup:2026-11-29T03:00:00.000Z`);
-- the first process to insert the key runs it, every other skips it. The advisory lock (job:<name>) only kept two
-- runs from overlapping: a fast job ran again on each machine whose clock ticked a few milliseconds later.
-- Keys older than a day are deleted as new ones are claimed. docs/decisions.md, D162.
create table job_slots (
  key text primary key,
  claimed_at timestamptz not null default now()
);
