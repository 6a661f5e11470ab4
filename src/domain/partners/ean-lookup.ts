// C3.3: the EAN status of a draft, from the EAN register of the onboarding area (by postal code and
// house number). `source: "api"` runs this during the request; CSV drafts get 'pending' and the
// draft-ean-lookup job runs the same function later.
import type { Deps } from '../../deps.ts';
import type { AddressIgnoredReason, EanStatus } from '../../db/tables/partner.ts';
import { normaliseAddition } from '../ean/ean.ts';
import { checkEan, EanRegisterUnavailable } from '../ean/index.ts';

export interface DraftAddress {
  postal_code: string;
  house_number: string;
  house_number_addition: string | null;
}

export interface EanLookupResult {
  ean_status: EanStatus;
  ean_code: string | null;
  ean_candidates: string[];
  /** set when the register contradicts the row's EAN: the address is dropped, the EAN kept */
  address_ignored?: AddressIgnoredReason;
}

/** EANs the register lists at this address: the exact addition first, else every EAN at the number. */
async function eansAtAddress(deps: Deps, a: DraftAddress): Promise<string[]> {
  const entries = await deps.eanRegister.findByAddress(a);
  const want = normaliseAddition(a.house_number_addition);
  const exact = entries.filter((e) => normaliseAddition(e.house_number_addition) === want);
  const chosen = exact.length > 0 || want !== '' ? exact : entries;
  return [...new Set(chosen.map((e) => e.ean_code))].sort();
}

/**
 * Look up one row. A known EAN with an address is checked against the register (C2.7 verdict: listed
 * elsewhere or another EAN at the address → ean_mismatch). Without an EAN the address is looked up:
 * none → not_found, one → resolved, several → candidates. An unreachable register leaves it pending.
 */
export async function lookupDraftEan(
  deps: Deps,
  ean: string | null,
  address: DraftAddress | null,
): Promise<EanLookupResult> {
  if (!address) {
    return ean ? { ean_status: 'resolved', ean_code: ean, ean_candidates: [] } : { ean_status: 'not_found', ean_code: null, ean_candidates: [] };
  }
  try {
    if (ean) {
      const v = await checkEan(deps.eanRegister, ean, address);
      return v.outcome === 'mismatch'
        ? { ean_status: 'resolved', ean_code: ean, ean_candidates: [], address_ignored: 'ean_mismatch' }
        : { ean_status: 'resolved', ean_code: ean, ean_candidates: [] };
    }
    const found = await eansAtAddress(deps, address);
    if (found.length === 0) return { ean_status: 'not_found', ean_code: null, ean_candidates: [] };
    if (found.length === 1) return { ean_status: 'resolved', ean_code: found[0]!, ean_candidates: [] };
    return { ean_status: 'candidates', ean_code: null, ean_candidates: found };
  } catch (err) {
    if (!(err instanceof EanRegisterUnavailable)) throw err;
    deps.logger.warn({ err: err.message }, 'EAN register unavailable; draft lookup deferred');
    return { ean_status: 'pending', ean_code: ean, ean_candidates: [] };
  }
}

/** The `ean_candidates` count of a `created` item. */
export function candidateCount(status: EanStatus, candidates: string[]): number {
  if (status === 'candidates') return candidates.length;
  return status === 'resolved' ? 1 : 0;
}
