// OCMF signed meter values (C5.5): parse, verify, and the key forms the gateway accepts. Pure: no database.
import { curveOf, decodePublicKey, spkiHex } from './keys.ts';

export { parseOcmf, parseOcmfTime, unwrapSignedData, type OcmfReading, type OcmfRecord, type SignedEnvelope } from './parse.ts';
export { decodePublicKey, spkiHex } from './keys.ts';
export {
  algorithmOf,
  DEFAULT_ALGORITHM,
  readingMatches,
  TIME_TOLERANCE_MS,
  verifyRecord,
  verifySignedData,
  type SignatureStatus,
  type Verdict,
  type VerdictReason,
  type VerifyInput,
} from './verify.ts';

/** The review reason (C5.5 `review.reason`) of a session held because one of its readings has an invalid signature. */
export const INVALID_SIGNATURE = 'invalid_signature';

/**
 * A key an operator registers for a charger, in the one stored form (DER SubjectPublicKeyInfo, upper-case hex);
 * null when the text is not an EC public key. A bare point needs its curve named (OpenSSL name, e.g. brainpoolP256r1),
 * except for P-256 and P-384, which its size tells.
 */
export function normalizePublicKey(text: string, curve?: string | null): { key: string; curve: string } | null {
  const k = decodePublicKey(text, curve);
  return k ? { key: spkiHex(k), curve: curveOf(k) } : null;
}
