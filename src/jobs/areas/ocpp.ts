// Jobs of the ocpp area. Owned by that area: add yours here.
import type { Job } from '../job.ts';
import { ocppCommandsCleanupJob } from '../ocpp-commands-cleanup.job.ts';

export const ocppJobs: Job[] = [ocppCommandsCleanupJob];
