// Jobs of the partner area. Owned by that area: add yours here.
import type { Job } from '../job.ts';

export const partnerJobs: Job[] = [];
