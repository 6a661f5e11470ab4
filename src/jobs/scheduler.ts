// node-cron scheduler: one task per Job that has a cron expression (src/jobs/registry.ts). Every run, scheduled
// or through POST /admin/jobs/:job/run, goes through runJobExclusive, so one process at a time runs a job:
//  - PostgreSQL: pg_try_advisory_lock on a dedicated connection (db.connection()), held while the job runs on
//    the pool; a second process (or a second run in this one) finds the lock taken and skips.
//  - PGlite: one process per data dir (TOOLCHAIN.md §3), so an in-process mutex per database is enough.
// Crons are read in Europe/Amsterdam time (the service's calendar, C6.8).
import { sql } from 'kysely';
import cron, { type Logger as CronLogger, type RunCoordinator, type ScheduledTask } from 'node-cron';
import { Counter } from 'prom-client';
import { heldAdvisoryLocks, withAdvisoryLock } from '../db/locks.ts';
import type { Deps } from '../deps.ts';
import type { Job } from './job.ts';
import { allJobs } from './registry.ts';
import { cutText } from '../lib/nul.ts';
import { throttledLog } from '../lib/throttled-log.ts';

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

export type JobTrigger = 'schedule' | 'admin';

/** Runs a job unless another run of it holds the lock; a failure of the job propagates. Every run that took the
 * lock is recorded in job_runs (D146), while the lock is still held. */
export async function runJobExclusive(deps: Deps, job: Job, trigger: JobTrigger = 'admin'): Promise<JobOutcome> {
  const counter = jobCounter(deps);
  const count = (outcome: string) => counter.inc({ job: job.name, outcome });
  const run = async (): Promise<JobOutcome> => {
    const startedAt = deps.clock(); // D250: the database's time, as every process tells it
    try {
      const result = await job.run(deps);
      count('ok');
      await recordRun(deps, job.name, trigger, startedAt, { outcome: 'ok', result });
      return { ran: true, result };
    } catch (err) {
      count('failed');
      await recordRun(deps, job.name, trigger, startedAt, { outcome: 'failed', error: err instanceof Error ? err.message : String(err) });
      throw err;
    }
  };

  // D169: every run, scheduled or by hand, is known to the stopping service, which waits for it before closing the database
  const runs = runsOf(deps);
  // D265: a lock that could not be released after the run (its connection lost) is logged; the run's own outcome,
  // as recorded in job_runs, is what the caller gets (it answered 500 job_failed for a run recorded ok)
  const onUnlockFailed = (err: unknown) =>
    throttledLog(deps.logger).event(
      'warn',
      'job.unlock_failed',
      { job: job.name, reason: err instanceof Error ? err.message : String(err) },
      "job: its advisory lock could not be released (the lock's connection was lost); the server ends that session and releases the lock",
    );
  const pending = withAdvisoryLock(deps.db, deps.dbKind, `job:${job.name}`, run, { wait: false, onUnlockFailed });
  runs.add(pending);
  const r = await pending.finally(() => runs.delete(pending));
  if (r.acquired) return r.value;
  count('skipped');
  return { ran: false, reason: 'already_running' };
}

/** D226: a woken run that found another process running the job tries once more after this long */
const WAKE_RETRY_MS = 2_000;

const inFlightRuns = new WeakMap<object, Set<Promise<unknown>>>();
const runsOf = (deps: Deps): Set<Promise<unknown>> => {
  let runs = inFlightRuns.get(deps.db);
  if (!runs) inFlightRuns.set(deps.db, (runs = new Set()));
  return runs;
};

/**
 * D169: resolves when every job run of this service's database in this process has ended, also those started by
 * POST /admin/jobs/:job/run (a stopping service sets deps.startup.stopping first, so the outbox run ends after the
 * message in flight).
 */
export async function jobRunsSettled(deps: Deps): Promise<void> {
  const runs = runsOf(deps);
  while (runs.size) await Promise.allSettled([...runs]);
}

/** Stored result: JSON the job returned (null when it returned nothing or something JSON cannot hold). */
function resultJson(result: unknown): string | null {
  try {
    const text = JSON.stringify(result ?? null);
    return text === undefined || text.includes('\\u0000') ? null : text;
  } catch {
    return null;
  }
}

/** The run's record; a failure to write it is logged and never replaces the job's own outcome. */
async function recordRun(
  deps: Deps,
  job: string,
  trigger: JobTrigger,
  startedAt: Date,
  o: { outcome: 'ok'; result: unknown } | { outcome: 'failed'; error: string },
): Promise<void> {
  const ok = o.outcome === 'ok';
  const row = {
    job,
    trigger,
    started_at: startedAt,
    finished_at: deps.clock(),
    outcome: o.outcome,
    result: ok ? resultJson(o.result) : null,
    error: ok ? null : cutText(o.error.replaceAll('\u0000', ''), 500),
  };
  try {
    await deps.db
      .insertInto('job_runs')
      .values({ ...row, last_ok_at: ok ? row.finished_at : null })
      .onConflict((oc) =>
        oc.column('job').doUpdateSet((eb) => ({
          trigger: eb.ref('excluded.trigger'),
          started_at: eb.ref('excluded.started_at'),
          finished_at: eb.ref('excluded.finished_at'),
          outcome: eb.ref('excluded.outcome'),
          result: eb.ref('excluded.result'),
          error: eb.ref('excluded.error'),
          last_ok_at: ok ? eb.ref('excluded.last_ok_at') : eb.ref('job_runs.last_ok_at'),
        })),
      )
      .execute();
  } catch (err) {
    deps.logger.warn({ err, job }, 'job run not recorded');
  }
}

export interface JobStatus {
  name: string;
  cron: string | null;
  /** some process holds the job's lock now */
  running: boolean;
  last_run: {
    trigger: JobTrigger;
    started_at: string;
    finished_at: string;
    outcome: 'ok' | 'failed';
    result: unknown;
    error: string | null;
  } | null;
  last_ok_at: string | null;
}

/** Every job with its cron, whether a process runs it now, and its last recorded run (D146). */
export async function listJobs(deps: Deps, jobs: Job[] = allJobs): Promise<JobStatus[]> {
  const rows = await deps.db.selectFrom('job_runs').selectAll().execute();
  const byJob = new Map(rows.map((r) => [r.job, r]));
  const running = await heldAdvisoryLocks(deps.db, deps.dbKind, jobs.map((j) => `job:${j.name}`));
  return jobs.map((j) => {
    const r = byJob.get(j.name);
    return {
      name: j.name,
      cron: j.cron(deps.config),
      running: running.has(`job:${j.name}`),
      last_run: r
        ? {
            trigger: r.trigger,
            started_at: new Date(r.started_at).toISOString(),
            finished_at: new Date(r.finished_at).toISOString(),
            outcome: r.outcome,
            result: r.result ?? null,
            error: r.error,
          }
        : null,
      last_ok_at: r?.last_ok_at ? new Date(r.last_ok_at).toISOString() : null,
    };
  });
}

/** D253: a tick this far ahead of the database's clock or more is not waited for (the clock.offset warning names the machine) */
const MAX_EARLY_WAIT_MS = 3_600_000;

/**
 * D162: node-cron asks before each scheduled run, with a key of the task and the moment; the process whose insert of
 * that key goes in runs it, every other process (this machine's or another's) skips it. The advisory lock still
 * keeps a manual run and a scheduled one apart.
 */
export function slotCoordinator(deps: Deps): RunCoordinator {
  return {
    async shouldRun(key: string): Promise<boolean> {
      const task = key.slice(0, -25); // the key is `${task name}:${moment.toISOString()}` (24 characters)
      // D253: node-cron fires on this machine's clock; a machine ahead of the database's waits until the database's
      // time reaches the moment, so no process runs a tick early (one behind is late by its offset, and the first
      // process to reach the moment claims it)
      const early = Date.parse(key.slice(-24)) - deps.clock().getTime();
      if (early > 0 && early <= MAX_EARLY_WAIT_MS) await new Promise((r) => setTimeout(r, early).unref());
      if (deps.startup?.stopping) return false;
      const claimed = await deps.db.insertInto('job_slots').values({ key }).onConflict((oc) => oc.column('key').doNothing()).returning('key').executeTakeFirst();
      if (claimed) {
        await deps.db
          .deleteFrom('job_slots')
          .where('key', 'like', `${task.replace(/[\\%_]/g, (c) => `\\${c}`)}:%`)
          .where('claimed_at', '<', sql<Date>`now() - interval '1 day'`)
          .execute();
      }
      return claimed !== undefined;
    },
  };
}

/**
 * D223: node-cron's own messages as the service's JSON lines. Its default logger wrote coloured, multi-line text to
 * stdout beside the JSON (during a database outage a dump of about 27 lines at every tick it skipped, in every
 * process): now a warning or error is `cron.warning` / `cron.error` with the message and the error's own message (no
 * stack), once a minute per process with a count of the rest (the throttle of D222); info and debug go to debug.
 */
function cronLogger(deps: Deps): CronLogger {
  const text = (m: string | Error, err?: Error) => {
    const own = m instanceof Error ? m.message : m;
    const cause = m instanceof Error ? undefined : err?.message;
    return `node-cron: ${own}${cause ? `: ${cause}` : ''}`;
  };
  return {
    info: (m) => deps.logger.debug({ event: 'cron.info' }, text(m)),
    debug: (m, err) => deps.logger.debug({ event: 'cron.debug' }, text(m, err)),
    warn: (m) => throttledLog(deps.logger).event('warn', 'cron.warning', {}, text(m)),
    error: (m, err) => throttledLog(deps.logger).event('warn', 'cron.error', {}, text(m, err)),
  };
}

export function startScheduler(deps: Deps, jobs: Job[] = allJobs): SchedulerHandle {
  const tasks: ScheduledTask[] = [];
  const inFlight = new Set<Promise<unknown>>();
  const runScheduled = (job: Job, woken = false): Promise<JobOutcome | null> => {
    const p = runJobExclusive(deps, job, 'schedule')
      .then((o) => {
        // D142: what the run did, as a manual run answers it
        if (o.ran) deps.logger.info({ event: 'job.finished', job: job.name, trigger: 'schedule', ...(woken ? { woken } : {}), result: o.result ?? null }, 'job finished');
        else deps.logger.debug({ job: job.name }, 'job skipped: another process is running it');
        return o;
      })
      .catch((err: unknown) => {
        deps.logger.error({ err, job: job.name }, 'job failed');
        return null;
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
    return p;
  };
  for (const job of jobs) {
    const expr = job.cron(deps.config);
    if (!expr) continue;
    const task = cron.schedule(
      expr,
      () => runScheduled(job),
      // D162: one process runs each scheduled moment, elected through PostgreSQL (node-cron's run coordinator)
      { name: `ere:${job.name}`, timezone: 'Europe/Amsterdam', noOverlap: true, distributed: true, runCoordinator: slotCoordinator(deps), logger: cronLogger(deps) },
    );
    tasks.push(task);
  }
  const unsubscribe = jobs.filter((j) => j.wakeTopic && j.cron(deps.config)).map((job) => wakeOn(deps, job, runScheduled));
  // D215: a one-time job starts with the scheduler, in the background (the service is ready meanwhile); its lock lets
  // one process run it, and the job itself knows when it was done
  for (const job of jobs) if (job.atStart) void runScheduled(job);
  return {
    jobs: tasks.map((t) => (t.name ?? '').replace(/^ere:/, '')),
    async stop() {
      for (const off of unsubscribe) off();
      for (const t of tasks) {
        await t.stop();
        await t.destroy();
      }
      await Promise.allSettled([...inFlight]);
    },
  };
}

/**
 * D226: a run asked for on the job's bus topic. Asks that come while this process runs the job make one more run after
 * it (what they announced may have come after the run's last look); an ask that finds another process running the job
 * tries once more a little later, for the same reason. The cron stays the fallback for a missed event.
 */
function wakeOn(deps: Deps, job: Job, runScheduled: (job: Job, woken: boolean) => Promise<JobOutcome | null>): () => void {
  if (!deps.bus || !job.wakeTopic) return () => {};
  let running = false;
  let again = false;
  let retry: NodeJS.Timeout | null = null;
  const wake = (isRetry = false): void => {
    if (deps.startup?.stopping) return;
    if (running) {
      again = true;
      return;
    }
    running = true;
    again = false;
    void runScheduled(job, true).then((o) => {
      running = false;
      if (again) wake();
      // another process's run: its next batch reads the queue again, so one later try covers a run that was ending
      else if (o && !o.ran && !isRetry && !retry) retry = setTimeout(() => ((retry = null), wake(true)), WAKE_RETRY_MS).unref();
    });
  };
  const off = deps.bus.subscribe(job.wakeTopic, () => wake());
  return () => {
    off();
    if (retry) clearTimeout(retry);
  };
}
