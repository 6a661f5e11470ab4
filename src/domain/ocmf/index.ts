// OCMF signed meter values (C5.5): parse, verify, and the key forms the gateway accepts. Pure: no database.
import { curveOf, decodePublicKey, opensslCurve, spkiHex, VERIFIABLE } from './keys.ts';

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
export function normalizePublicKey(text: string, curve?: string | null): { key: string; curve: string } | { error: string } {
  const named = curve === undefined || curve === null ? undefined : opensslCurve(curve);
  if (curve !== undefined && curve !== null && named === undefined) {
    return { error: `curve ${curve} is not one OCMF signs with (${[...VERIFIABLE].join(', ')})` };
  }
  const k = decodePublicKey(text, named);
  if (!k) return { error: 'public_key is not an EC public key (hex or base64 DER, PEM, or a point with its curve)' };
  // D177: a key on a curve no OCMF signature algorithm names could never verify a value: every signed reading of the
  // charger would be invalid and held
  if (!VERIFIABLE.has(curveOf(k))) return { error: `the key is on ${curveOf(k)}, which no OCMF signature algorithm uses (${[...VERIFIABLE].join(', ')})` };
  if (named !== undefined && curveOf(k) !== named) return { error: `the key is on ${curveOf(k)}, not ${curve}` };
  return { key: spkiHex(k), curve: curveOf(k) };
}
