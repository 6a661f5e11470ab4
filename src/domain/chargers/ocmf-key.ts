// C5.5: the public key of a charger's signing meter, registered by an operator. When set, it is the key every
// signed meter value of the charger is verified with (a value signed with another key is invalid); when not set,
// the key the charger sends in the value is used.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { DomainError } from '../errors.ts';
import { normalizePublicKey } from '../ocmf/index.ts';
import { requireCharger } from './ocpp-charger.ts';

export interface OcmfKeyView {
  charger_id: string;
  /** DER SubjectPublicKeyInfo, upper-case hex; null = none registered */
  ocmf_public_key: string | null;
  /** the key's curve (OpenSSL name: prime256v1, secp384r1, brainpoolP256r1, ...) */
  curve: string | null;
}

/**
 * PUT /admin/chargers/:charger_id/ocmf-public-key. The key may be written as hex or base64 DER, PEM, or a bare EC
 * point (then `curve` names its curve unless it is P-256 or P-384); it is stored in one form. null removes it.
 */
export async function setOcmfPublicKey(deps: Deps, chargerId: string, key: string | null, curve?: string | null): Promise<OcmfKeyView> {
  await requireCharger(deps, chargerId);
  let stored: { key: string; curve: string } | null = null;
  if (key !== null) {
    stored = normalizePublicKey(key, curve);
    if (!stored) throw new DomainError('invalid_public_key', 'public_key is not an EC public key (hex or base64 DER, PEM, or a point with its curve)');
  }
  await deps.db.updateTable('chargers').set({ ocmf_public_key: stored?.key ?? null, updated_at: sql`now()` }).where('id', '=', chargerId).execute();
  return { charger_id: chargerId, ocmf_public_key: stored?.key ?? null, curve: stored?.curve ?? null };
}
