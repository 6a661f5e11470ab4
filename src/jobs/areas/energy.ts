// Jobs of the energy area. Owned by that area: add yours here.
import type { Job } from '../job.ts';
import { energyAggregateJob } from '../energy-aggregate.job.ts';
import { ereReviewJob } from '../ere-review.job.ts';

export const energyJobs: Job[] = [energyAggregateJob, ereReviewJob];
