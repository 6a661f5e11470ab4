// Jobs of the platform area. Owned by that area: add yours here.
import type { Job } from '../job.ts';
import { rateLimitCleanupJob } from '../rate-limit-cleanup.job.ts';
import { partitionsJob } from '../partitions.job.ts';
import { retentionJob } from '../retention.job.ts';

export const platformJobs: Job[] = [rateLimitCleanupJob, retentionJob, partitionsJob];
