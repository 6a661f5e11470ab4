// node-cron scheduler: one task per Job that has a cron expression (src/jobs/registry.ts). Every run, scheduled
// or through POST /admin/jobs/:job/run, goes through runJobExclusive, so one process at a time runs a job:
//  - PostgreSQL: pg_try_advisory_lock on a dedicated connection (db.connection()), held while the job runs on
//    the pool; a second process (or a second run in this one) finds the lock taken and skips.
//  - PGlite: one process per data dir (TOOLCHAIN.md §3), so an in-process mutex per database is enough.
// Crons are read in Europe/Amsterdam time (the service's calendar, C6.8).
import cron, { type ScheduledTask } from 'node-cron';
import { Counter } from 'prom-client';
import { withAdvisoryLock } from '../db/locks.ts';
import type { Deps } from '../deps.ts';
import type { Job } from './job.ts';
import { allJobs } from './registry.ts';

export interface SchedulerHandle {
  /** names of the scheduled jobs */
  jobs: string[];
  /** stops the cron tasks and waits for runs in progress */
  stop(): Promise<void>;
}

export type JobOutcome = { ran: true; result: unknown } | { ran: false; reason: 'already_running' };

function jobCounter(deps: Deps): Counter<'job' | 'outcome'> {
  const existing = deps.metrics.getSingleMetric('job_runs_total');
  if (existing) return existing as Counter<'job' | 'outcome'>;
  return new Counter({
    name: 'job_runs_total',
    help: 'Scheduled job runs by outcome (ok, failed, skipped: another process held the lock)',
    labelNames: ['job', 'outcome'] as const,
    registers: [deps.metrics],
  });
}

/** Runs a job unless another run of it holds the lock; a failure of the job propagates. */
export async function runJobExclusive(deps: Deps, job: Job): Promise<JobOutcome> {
  const counter = jobCounter(deps);
  const count = (outcome: string) => counter.inc({ job: job.name, outcome });
  const run = async (): Promise<JobOutcome> => {
    try {
      const result = await job.run(deps);
      count('ok');
      return { ran: true, result };
    } catch (err) {
      count('failed');
      throw err;
    }
  };

  const r = await withAdvisoryLock(deps.db, deps.dbKind, `job:${job.name}`, run, { wait: false });
  if (r.acquired) return r.value;
  count('skipped');
  return { ran: false, reason: 'already_running' };
}

export function startScheduler(deps: Deps, jobs: Job[] = allJobs): SchedulerHandle {
  const tasks: ScheduledTask[] = [];
  const inFlight = new Set<Promise<unknown>>();
  for (const job of jobs) {
    const expr = job.cron(deps.config);
    if (!expr) continue;
    const task = cron.schedule(
      expr,
      () => {
        const p = runJobExclusive(deps, job)
          .then((o) => {
            // D142: what the run did, as a manual run answers it
            if (o.ran) deps.logger.info({ event: 'job.finished', job: job.name, trigger: 'schedule', result: o.result ?? null }, 'job finished');
            else deps.logger.debug({ job: job.name }, 'job skipped: another process is running it');
          })
          .catch((err: unknown) => deps.logger.error({ err, job: job.name }, 'job failed'))
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
        return p;
      },
      { name: `ere:${job.name}`, timezone: 'Europe/Amsterdam', noOverlap: true },
    );
    tasks.push(task);
  }
  return {
    jobs: tasks.map((t) => (t.name ?? '').replace(/^ere:/, '')),
    async stop() {
      for (const t of tasks) {
        await t.stop();
        await t.destroy();
      }
      await Promise.allSettled([...inFlight]);
    },
  };
}
