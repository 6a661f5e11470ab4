// The weekly EAN re-check (spec §3, C2.7): unverified connections → matched or mismatched.
// Cron EAN_RECHECK_CRON (default Monday 03:00); the scheduler runs it under a PostgreSQL advisory lock.
import { recheckUnverifiedEans } from '../domain/ean/index.ts';
import type { Job } from './job.ts';

export const eanRecheckJob: Job = {
  name: 'ean-recheck',
  cron: (config) => config.EAN_RECHECK_CRON,
  run: (deps) => recheckUnverifiedEans(deps),
};
