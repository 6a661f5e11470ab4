// Jobs of the onboarding area. Owned by that area: add yours here.
import type { Job } from '../job.ts';
import { eanRecheckJob } from '../ean-recheck.job.ts';

export const onboardingJobs: Job[] = [eanRecheckJob];
