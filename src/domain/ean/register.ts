// C2.7 / C3.3: the EAN register behind one interface. The onboarding area implements it (a table-backed
// default loaded through POST /admin/ean-register, and an HTTP adapter for a real register) and puts the
// instance at deps.services.eanRegister. The partner area uses lookupByAddress for draft EAN lookups.
import type { Deps } from '../../deps.ts';

export interface RegisterAddress {
  postal_code: string; // normalised '1234AB'
  house_number: string;
  house_number_addition?: string | null;
}

/** What the register says about an (EAN, address) pair (C2.7). */
export type EanCheckOutcome =
  | { outcome: 'matched' } // EAN listed at that address
  | { outcome: 'mismatched' } // EAN listed at another address, or another EAN listed at this address
  | { outcome: 'unknown' }; // EAN unknown and no EAN listed at the address (new build)

export interface EanRegister {
  check(ean: string, address: RegisterAddress): Promise<EanCheckOutcome>;
  /** EANs the register lists at an address (C3.3: 0 → not_found, 1 → resolved, more → candidates). */
  lookupByAddress(address: RegisterAddress): Promise<string[]>;
}

export function eanRegisterOf(deps: Deps): EanRegister {
  const r = deps.services['eanRegister'] as EanRegister | undefined;
  if (!r) throw new Error('no EAN register configured (deps.services.eanRegister)');
  return r;
}
