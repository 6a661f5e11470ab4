// C5.5: the public key of a charger's signing meter, registered by an operator. When set, it is the key every
// signed meter value of the charger is verified with (a value signed with another key is invalid); when not set,
// the key the charger sends in the value is used.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { DomainError } from '../errors.ts';
import { curveOf, decodePublicKey } from '../ocmf/keys.ts';
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
    const n = normalizePublicKey(key, curve);
    if ('error' in n) throw new DomainError('invalid_public_key', n.error);
    stored = n;
  }
  await deps.db.updateTable('chargers').set({ ocmf_public_key: stored?.key ?? null, updated_at: sql`now()` }).where('id', '=', chargerId).execute();
  return { charger_id: chargerId, ocmf_public_key: stored?.key ?? null, curve: stored?.curve ?? null };
}

/** GET /admin/chargers/:charger_id/ocmf-public-key: the registered key and its curve (null: none registered). */
export async function getOcmfPublicKey(deps: Deps, chargerId: string): Promise<OcmfKeyView> {
  await requireCharger(deps, chargerId);
  const r = await deps.db.selectFrom('chargers').select('ocmf_public_key').where('id', '=', chargerId).executeTakeFirstOrThrow();
  const k = r.ocmf_public_key === null ? null : decodePublicKey(r.ocmf_public_key);
  return { charger_id: chargerId, ocmf_public_key: r.ocmf_public_key, curve: k ? curveOf(k) : null };
}
