// node-cron scheduler: one <name>.job.ts per job; each run takes a PostgreSQL advisory lock so one process
// runs it. Owned by the platform area.
import type { Deps } from '../deps.ts';

export interface SchedulerHandle {
  stop(): Promise<void>;
}

export function startScheduler(_deps: Deps): SchedulerHandle {
  return { stop: async () => {} };
}
