// Jobs of the energy area. Owned by that area: add yours here.
import type { Job } from '../job.ts';

export const energyJobs: Job[] = [];
