// C3.3: the EAN status of a draft, from the EAN register of the onboarding area (by postal code and
// house number). `source: "api"` runs this during the request; CSV drafts get 'pending' and the
// draft-ean-lookup job runs the same function later.
import type { Deps } from '../../deps.ts';
import type { AddressIgnoredReason, EanStatus } from '../../db/tables/partner.ts';
import { normaliseAddition, normaliseHouseNumber, normalisePostalCode } from '../ean/ean.ts';
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

/**
 * D160: an address without an addition completed with the one the register lists for the chosen EAN at the same
 * postal code and house number. A customer offered candidates at "3" (the register's 3A and 3B) picks one, and the
 * connection must be at that EAN's address, or the register check refuses every choice (the page asks for no addition
 * when the upload gave the number). Unchanged when the address has an addition, the register lists the EAN elsewhere,
 * or the register cannot be asked (the connection's own check then decides).
 */
export async function withRegisterAddition<T extends DraftAddress>(deps: Deps, address: T, ean: string): Promise<T> {
  if (normaliseAddition(address.house_number_addition)) return address;
  const entry = await deps.eanRegister.findByEan(ean).catch(() => null);
  const addition = entry?.house_number_addition ?? null;
  if (!entry || !normaliseAddition(addition)) return address;
  const same =
    normalisePostalCode(entry.postal_code) === normalisePostalCode(address.postal_code) &&
    normaliseHouseNumber(entry.house_number) === normaliseHouseNumber(address.house_number);
  return same ? { ...address, house_number_addition: addition } : address;
}

/** D160: for the claim page, each candidate EAN's house number as the register lists it (e.g. "3A"), by EAN. */
export async function candidateLabels(deps: Deps, address: { postal_code: string; house_number: string }): Promise<Record<string, string>> {
  const entries = await deps.eanRegister.findByAddress({ ...address, house_number_addition: null }).catch(() => []);
  return Object.fromEntries(entries.map((e) => [e.ean_code, `${e.house_number}${e.house_number_addition ? ` ${e.house_number_addition}` : ''}`]));
}
