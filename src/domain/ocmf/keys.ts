// Public keys of signing meters as chargers and operators give them: DER SubjectPublicKeyInfo in hex or base64
// (sometimes base64 of the hex text), PEM, or a bare EC point (uncompressed 04… or compressed 02/03…), whose curve
// then comes from the signature algorithm. node:crypto (OpenSSL) does the curve work: it knows every curve OCMF
// names, brainpool included.
import crypto, { type KeyObject } from 'node:crypto';

/** OpenSSL curve names by the names OCMF's signature algorithms use. */
export const CURVES: Record<string, string> = {
  secp192k1: 'secp192k1',
  secp192r1: 'prime192v1',
  secp256k1: 'secp256k1',
  secp256r1: 'prime256v1',
  secp384r1: 'secp384r1',
  brainpool256r1: 'brainpoolP256r1',
  brainpoolp256r1: 'brainpoolP256r1',
  brainpool384r1: 'brainpoolP384r1',
  brainpoolp384r1: 'brainpoolP384r1',
};

/** Object identifiers (DER content bytes) of the curves, for wrapping a bare point into SubjectPublicKeyInfo. */
const CURVE_OID: Record<string, string> = {
  secp192k1: '2b8104001f',
  prime192v1: '2a8648ce3d030101',
  secp256k1: '2b8104000a',
  prime256v1: '2a8648ce3d030107',
  secp384r1: '2b81040022',
  brainpoolP256r1: '2b2403030208010107',
  brainpoolP384r1: '2b240303020801010b',
};
const EC_PUBLIC_KEY_OID = '2a8648ce3d0201';

/** Coordinate size in bytes of each curve. */
const FIELD_BYTES: Record<string, number> = {
  secp192k1: 24, prime192v1: 24, secp256k1: 32, prime256v1: 32, secp384r1: 48, brainpoolP256r1: 32, brainpoolP384r1: 48,
};

function der(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, content]);
}

function spkiOfPoint(point: Buffer, curve: string): Buffer | null {
  const oid = CURVE_OID[curve];
  const size = FIELD_BYTES[curve];
  if (!oid || !size) return null;
  const fits = (point[0] === 0x04 && point.length === 1 + 2 * size) || ((point[0] === 0x02 || point[0] === 0x03) && point.length === 1 + size);
  if (!fits) return null;
  const algorithm = der(0x30, Buffer.concat([der(0x06, Buffer.from(EC_PUBLIC_KEY_OID, 'hex')), der(0x06, Buffer.from(oid, 'hex'))]));
  return der(0x30, Buffer.concat([algorithm, der(0x03, Buffer.concat([Buffer.from([0]), point]))]));
}

/** The curve a bare point most likely belongs to when nothing names one: the OCMF default sizes. */
function curveBySize(point: Buffer): string | null {
  const size = point[0] === 0x04 ? (point.length - 1) / 2 : point.length - 1;
  return size === 32 ? 'prime256v1' : size === 48 ? 'secp384r1' : null;
}

const HEX = /^(?:[0-9a-fA-F]{2})+$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** The bytes a key text stands for: hex, or base64 (of the bytes, or of their hex text). */
function bytesOf(text: string): Buffer | null {
  const t = text.replace(/\s+/g, '');
  if (HEX.test(t)) return Buffer.from(t, 'hex');
  if (!BASE64.test(t)) return null;
  const b = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  const ascii = b.toString('latin1');
  return HEX.test(ascii) ? Buffer.from(ascii, 'hex') : b;
}

/** The curves a signature can be verified on: those OCMF's signature algorithms name (D177). */
export const VERIFIABLE = new Set(Object.values(CURVES));

function ecKey(key: KeyObject): KeyObject | null {
  return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve ? key : null;
}

/** A curve as an operator names it (OCMF's name or OpenSSL's, any case) in OpenSSL's name; undefined when unknown. */
export function opensslCurve(name: string): string | undefined {
  const lower = name.trim().toLowerCase();
  return CURVES[lower] ?? [...VERIFIABLE].find((c) => c.toLowerCase() === lower);
}

/**
 * Decodes a public key as chargers and operators write it. `curve` (an OpenSSL name) is needed only for a bare
 * point; without one, a 32-byte coordinate means P-256 and a 48-byte one P-384. Null when it is not an EC key.
 */
export function decodePublicKey(text: string, curve?: string | null): KeyObject | null {
  const t = text.trim();
  if (t === '') return null;
  try {
    if (t.startsWith('-----BEGIN')) return ecKey(crypto.createPublicKey(t));
    const bytes = bytesOf(t.replace(/^0x/i, ''));
    if (bytes === null || bytes.length === 0) return null;
    if (bytes[0] === 0x30) return ecKey(crypto.createPublicKey({ key: bytes, format: 'der', type: 'spki' }));
    const name = curve ?? curveBySize(bytes);
    const spki = name ? spkiOfPoint(bytes, name) : null;
    return spki ? ecKey(crypto.createPublicKey({ key: spki, format: 'der', type: 'spki' })) : null;
  } catch {
    return null;
  }
}

/** A key as DER SubjectPublicKeyInfo in upper-case hex: the one form the gateway stores and compares. */
export function spkiHex(key: KeyObject): string {
  return key.export({ format: 'der', type: 'spki' }).toString('hex').toUpperCase();
}

/** The OpenSSL name of a key's curve. */
export function curveOf(key: KeyObject): string {
  return key.asymmetricKeyDetails?.namedCurve ?? '';
}
