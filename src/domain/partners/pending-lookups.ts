// C3.3 'pending': CSV drafts wait for the draft-ean-lookup job, which runs the same lookup as an
// API upload does during the request.
import type { Deps } from '../../deps.ts';
import { lookupDraftEan } from './ean-lookup.ts';

export interface DraftLookupRun {
  checked: number;
  resolved: number;
  candidates: number;
  not_found: number;
  still_pending: number;
  address_ignored: number;
}

export async function runDraftEanLookup(deps: Deps, opts: { limit?: number } = {}): Promise<DraftLookupRun> {
  const rows = await deps.db
    .selectFrom('partner_drafts')
    .select(['id', 'ean_code', 'postal_code', 'house_number', 'house_number_addition'])
    .where('ean_status', '=', 'pending')
    .orderBy('created_at')
    .limit(opts.limit ?? 500)
    .execute();
  const out: DraftLookupRun = { checked: rows.length, resolved: 0, candidates: 0, not_found: 0, still_pending: 0, address_ignored: 0 };
  for (const d of rows) {
    const address =
      d.postal_code && d.house_number
        ? { postal_code: d.postal_code, house_number: d.house_number, house_number_addition: d.house_number_addition }
        : null;
    const r = await lookupDraftEan(deps, d.ean_code, address);
    if (r.ean_status === 'pending') {
      out.still_pending++;
      continue;
    }
    if (r.ean_status === 'resolved') out.resolved++;
    else if (r.ean_status === 'candidates') out.candidates++;
    else out.not_found++;
    if (r.address_ignored) out.address_ignored++;
    await deps.db
      .updateTable('partner_drafts')
      .set({
        ean_status: r.ean_status,
        ean_code: r.ean_code,
        ean_candidates: JSON.stringify(r.ean_candidates),
        ...(r.address_ignored
          ? { address_ignored_reason: r.address_ignored, postal_code: null, house_number: null, house_number_addition: null }
          : {}),
      })
      .where('id', '=', d.id)
      .where('ean_status', '=', 'pending')
      .execute();
  }
  return out;
}
