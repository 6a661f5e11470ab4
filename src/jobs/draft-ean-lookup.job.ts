// C3.3: EAN lookups deferred from CSV imports (ean_status 'pending').
import { runDraftEanLookup } from '../domain/partners/index.ts';
import type { Job } from './job.ts';

export const draftEanLookupJob: Job = {
  name: 'draft-ean-lookup',
  cron: (config) => config.DRAFT_EAN_LOOKUP_CRON,
  run: (deps) => runDraftEanLookup(deps),
};
