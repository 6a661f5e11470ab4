// A scheduled job: one <name>.job.ts per job, listed in src/jobs/registry.ts. The scheduler runs it on
// its cron (one process at a time, under a PostgreSQL advisory lock); POST /admin/jobs/:job/run runs it now.
import type { Config } from '../config.ts';
import type { Deps } from '../deps.ts';

export interface Job {
  /** kebab-case name used in POST /admin/jobs/:job/run, e.g. 'energy-aggregate' */
  name: string;
  /** cron expression from configuration, or null for on-demand only */
  cron: (config: Config) => string | null;
  /** also run once in the background when a process's scheduler starts: a one-time repair after an upgrade (D215) */
  atStart?: boolean;
  /**
   * D226: a bus topic (src/db/bus.ts) on which any process can ask for a run now; every scheduler that schedules the job
   * runs it when asked (one at a time through the lock, one more run after a run in progress here)
   */
  wakeTopic?: string;
  /** does the work; the result is returned by the admin run endpoint */
  run: (deps: Deps) => Promise<unknown>;
}
