// Jobs of the partner area. Owned by that area: add yours here.
import type { Job } from '../job.ts';
import { draftEanLookupJob } from '../draft-ean-lookup.job.ts';
import { outboxDeliverJob } from '../outbox-deliver.job.ts';

export const partnerJobs: Job[] = [draftEanLookupJob, outboxDeliverJob];
