// Jobs of the onboarding area. Owned by that area: add yours here.
import type { Job } from '../job.ts';

export const onboardingJobs: Job[] = [];
