// Jobs of the ocpp area. Owned by that area: add yours here.
import type { Job } from '../job.ts';

export const ocppJobs: Job[] = [];
