// C4.7: the OCPP monthly aggregation every ENERGY_AGGREGATE_CRON and through POST /admin/jobs/energy-aggregate/run.
// Safe by itself too: aggregateMonthlyEnergy holds an advisory lock of its own for the run, which commits as it goes.
// Incremental from the stored watermark (a full recompute when none exists); operators force a full one with
// recomputeAllMonthlyEnergy (src/domain/energy/aggregate.ts).
import { aggregateMonthlyEnergy } from '../domain/energy/aggregate.ts';
import type { Job } from './job.ts';

export const energyAggregateJob: Job = {
  name: 'energy-aggregate',
  cron: (config) => config.ENERGY_AGGREGATE_CRON,
  run: (deps) => aggregateMonthlyEnergy(deps),
};
