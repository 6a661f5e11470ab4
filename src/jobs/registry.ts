// Every scheduled job of the service. Each runs under its own advisory lock, so it runs once whatever the number of
// processes (src/jobs/scheduler.ts).
import type { Job } from './job.ts';
import { doubtfulBackfillJob } from './doubtful-backfill.job.ts';
import { draftEanLookupJob } from './draft-ean-lookup.job.ts';
import { eanRecheckJob } from './ean-recheck.job.ts';
import { energyAggregateJob } from './energy-aggregate.job.ts';
import { ereReviewJob } from './ere-review.job.ts';
import { ocppCommandsCleanupJob } from './ocpp-commands-cleanup.job.ts';
import { outboxDeliverJob } from './outbox-deliver.job.ts';
import { partitionsJob } from './partitions.job.ts';
import { rateLimitCleanupJob } from './rate-limit-cleanup.job.ts';
import { retentionJob } from './retention.job.ts';

export const allJobs: Job[] = [
  rateLimitCleanupJob,
  retentionJob,
  partitionsJob,
  eanRecheckJob,
  ocppCommandsCleanupJob,
  draftEanLookupJob,
  outboxDeliverJob,
  energyAggregateJob,
  ereReviewJob,
  doubtfulBackfillJob,
];
export function findJob(name: string): Job | undefined {
  return allJobs.find((j) => j.name === name);
}
