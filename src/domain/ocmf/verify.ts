// Verifying a signed meter value (C5.5): the OCMF record is parsed, its reading matched against the plain reading
// it is attached to, and its ECDSA signature checked over the payload section's bytes with the meter's public key.
//   verified   — the signature holds with the key, and the record's reading is the plain reading
//   unverified — no key is known (or the data is in a format other than OCMF): nothing could be checked
//   invalid    — a bad signature, an unreadable record, a key or algorithm that does not fit, or a record whose
//                reading is not the plain reading it is attached to
import crypto, { type KeyObject } from 'node:crypto';
import { CURVES, curveOf, decodePublicKey, spkiHex } from './keys.ts';
import { type OcmfReading, type OcmfRecord, parseOcmf, unwrapSignedData } from './parse.ts';

export type SignatureStatus = 'verified' | 'unverified' | 'invalid';

export type VerdictReason =
  | 'no_key'
  | 'unsupported_format'
  | 'malformed'
  | 'value_mismatch'
  | 'unsupported_algorithm'
  | 'bad_key'
  | 'key_mismatch'
  | 'curve_mismatch'
  | 'bad_signature';

export interface Verdict {
  status: SignatureStatus;
  reason?: VerdictReason;
  detail?: string;
}

/** The OCMF default when a record names no algorithm (SA). */
export const DEFAULT_ALGORITHM = 'ECDSA-secp256r1-SHA256';

/** A record's reading matches a plain reading stamped up to this far apart (meter and charger clocks differ). */
export const TIME_TOLERANCE_MS = 60_000;

const ALGORITHM = /^ECDSA-([A-Za-z0-9]+)-SHA-?(256|384|512)$/i;

/** `ECDSA-<curve>-SHA<n>` → the OpenSSL curve name and hash, or null when it is not one OCMF uses. */
export function algorithmOf(sa: string): { curve: string; hash: 'sha256' | 'sha384' | 'sha512' } | null {
  const m = ALGORITHM.exec(sa.trim());
  // an own property only: a charger's "ECDSA-constructor-SHA256" must not find Object's constructor
  const name = m ? m[1]!.toLowerCase() : undefined;
  const curve = name !== undefined && Object.hasOwn(CURVES, name) ? CURVES[name] : undefined;
  return m && curve ? { curve, hash: `sha${m[2]}` as 'sha256' | 'sha384' | 'sha512' } : null;
}

/**
 * A record's reading is the plain reading when its energy value is the plain value at the record's resolution
 * (RV 2935.6 kWh is any plain value within ±50 Wh, 2935.600 within ±0.5 Wh; never finer than the plain reading's whole Wh) and, when the
 * meter's clock is synchronised (time status S, or none given), its time is within TIME_TOLERANCE_MS.
 */
export function readingMatches(r: OcmfReading, plain: { wh: bigint; at: Date }): boolean {
  const unit = r.unit.toLowerCase();
  const factor = unit === 'kwh' ? 1000 : unit === 'wh' ? 1 : null;
  if (factor === null) return false;
  const tolerance = Math.max(0.5, 0.5 * 10 ** -r.decimals * factor) + 1e-6;
  if (Math.abs(r.value * factor - Number(plain.wh)) > tolerance) return false;
  if (r.timeStatus !== null && r.timeStatus !== 'S') return true; // the meter's clock is informative only
  return r.at !== null && Math.abs(r.at.getTime() - plain.at.getTime()) <= TIME_TOLERANCE_MS;
}

function signatureBytes(sig: OcmfRecord['signature']): Buffer | null {
  if (sig.SM !== null && sig.SM.toLowerCase() !== 'application/x-der') return null;
  const se = (sig.SE ?? 'hex').toLowerCase();
  if (se === 'hex') return /^(?:[0-9a-fA-F]{2})+$/.test(sig.SD) ? Buffer.from(sig.SD, 'hex') : null;
  if (se === 'base64') return /^[A-Za-z0-9+/]+={0,2}$/.test(sig.SD) ? Buffer.from(sig.SD, 'base64') : null;
  return null;
}

/** Checks one parsed record's signature with a key. */
export function verifyRecord(record: OcmfRecord, key: KeyObject, algorithm: string | null): Verdict {
  const explicit = algorithm !== null;
  const alg = algorithmOf(algorithm ?? DEFAULT_ALGORITHM);
  if (!alg) return { status: 'invalid', reason: 'unsupported_algorithm', detail: `signature algorithm ${algorithm}` };
  // a record that names its curve must be signed on it; one that names none takes the key's (the OCMF default
  // is P-256, but meters that omit SA exist on other curves)
  if (explicit && curveOf(key) !== alg.curve) {
    return { status: 'invalid', reason: 'curve_mismatch', detail: `the key is on ${curveOf(key)}, the record names ${alg.curve}` };
  }
  const sig = signatureBytes(record.signature);
  if (!sig) return { status: 'invalid', reason: 'malformed', detail: 'the signature data (SD) is not readable with its SE/SM' };
  let ok = false;
  try {
    ok = crypto.verify(alg.hash, Buffer.from(record.payloadText, 'utf8'), { key, dsaEncoding: 'der' }, sig);
  } catch {
    ok = false;
  }
  return ok ? { status: 'verified' } : { status: 'invalid', reason: 'bad_signature' };
}

export interface VerifyInput {
  /** the stored signed value (meter_readings.signed_data) */
  signedData: string;
  /** the key registered for the charger: when there is one, it is the key (a different key sent is a mismatch) */
  registeredKey?: string | null | undefined;
  /** the plain reading the signed value is attached to */
  reading?: { wh: bigint; at: Date } | undefined;
}

/** The verdict on one signed meter value. */
export function verifySignedData(input: VerifyInput): Verdict {
  const env = unwrapSignedData(input.signedData);
  if (env.kind === 'other') return { status: 'unverified', reason: 'unsupported_format', detail: env.encodingMethod ?? 'not OCMF' };
  if (env.kind === 'malformed') return { status: 'invalid', reason: 'malformed', detail: env.reason };
  const parsed = parseOcmf(env.ocmf);
  if (!parsed.ok) return { status: 'invalid', reason: 'malformed', detail: parsed.reason };
  const { record } = parsed;
  const { reading } = input;
  if (reading && !record.readings.some((r) => readingMatches(r, reading))) {
    return { status: 'invalid', reason: 'value_mismatch', detail: `no reading of the record is ${reading.wh} Wh at ${reading.at.toISOString()}` };
  }
  const algorithm = record.signature.SA ?? (env.signingMethod && algorithmOf(env.signingMethod) ? env.signingMethod : null);
  const curve = algorithmOf(algorithm ?? DEFAULT_ALGORITHM)?.curve ?? null;
  const registered = input.registeredKey?.trim() ? decodePublicKey(input.registeredKey, curve) : null;
  if (input.registeredKey?.trim() && !registered) return { status: 'invalid', reason: 'bad_key', detail: 'the registered key is not an EC public key' };
  const sent = env.publicKey ? decodePublicKey(env.publicKey, curve) : null;
  if (env.publicKey && !sent && !registered) return { status: 'invalid', reason: 'bad_key', detail: 'the key sent is not an EC public key' };
  if (registered && sent && spkiHex(registered) !== spkiHex(sent)) {
    return { status: 'invalid', reason: 'key_mismatch', detail: 'the key sent is not the key registered for the charger' };
  }
  const key = registered ?? sent;
  if (!key) return { status: 'unverified', reason: 'no_key' };
  return verifyRecord(record, key, algorithm);
}
