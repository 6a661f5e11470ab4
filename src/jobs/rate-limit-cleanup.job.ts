// Deletes rate-limit counters whose window is long over (C1.5): the table holds one row per active caller.
import { deleteExpiredRateLimits } from '../domain/platform/rate-limits.ts';
import type { Job } from './job.ts';

export const rateLimitCleanupJob: Job = {
  name: 'rate-limit-cleanup',
  cron: (config) => config.RATE_LIMIT_CLEANUP_CRON,
  run: (deps) => deleteExpiredRateLimits(deps.db),
};
