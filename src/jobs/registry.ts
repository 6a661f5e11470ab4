// Every scheduled job of the service, by area.
import type { Job } from './job.ts';
import { platformJobs } from './areas/platform.ts';
import { onboardingJobs } from './areas/onboarding.ts';
import { ocppJobs } from './areas/ocpp.ts';
import { partnerJobs } from './areas/partner.ts';
import { energyJobs } from './areas/energy.ts';

export const allJobs: Job[] = [...platformJobs, ...onboardingJobs, ...ocppJobs, ...partnerJobs, ...energyJobs];

export function findJob(name: string): Job | undefined {
  return allJobs.find((j) => j.name === name);
}
