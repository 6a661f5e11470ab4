// Test helper: OCMF records signed by the test itself, with keys made by node:crypto on the curves OCMF names.
import crypto, { type KeyObject } from 'node:crypto';

export type OcmfCurve = 'secp256r1' | 'secp384r1' | 'brainpool256r1' | 'brainpool384r1';

const OPENSSL: Record<OcmfCurve, string> = {
  secp256r1: 'prime256v1',
  secp384r1: 'secp384r1',
  brainpool256r1: 'brainpoolP256r1',
  brainpool384r1: 'brainpoolP384r1',
};

export interface TestMeter {
  curve: OcmfCurve;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** DER SubjectPublicKeyInfo in hex, as meters print it */
  publicKeyHex: string;
}

export function aMeter(curve: OcmfCurve = 'secp256r1'): TestMeter {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: OPENSSL[curve] });
  return { curve, privateKey, publicKey, publicKeyHex: publicKey.export({ format: 'der', type: 'spki' }).toString('hex').toUpperCase() };
}

/** OCMF TM of an instant in UTC, synchronised: `2026-01-05T10:00:00,000+0000 S`. */
export const ocmfTime = (at: Date | string | number, status = 'S') =>
  new Date(at).toISOString().replace(/\.(\d{3})Z$/, ',$1+0000') + ` ${status}`;

export interface OcmfReadingInput {
  at: Date | string | number;
  /** the register in Wh (written as kWh with 3 decimals, as most meters do) */
  wh: number;
  tx?: string;
  timeStatus?: string;
}

/** The payload section's text (the signed bytes). */
export function ocmfPayload(readings: OcmfReadingInput[], extra: Record<string, unknown> = {}): string {
  const text = JSON.stringify({
    FV: '1.0', GI: 'TEST GATEWAY', GS: 'GW-1', GV: '1.0', PG: 'T1', MV: 'Test Meters', MM: 'TM-1', MS: 'M-0001',
    IS: false, IT: 'NONE', ID: '',
    RD: readings.map((r) => ({ TM: ocmfTime(r.at, r.timeStatus), TX: r.tx ?? 'C', RV: (r.wh / 1000).toFixed(3), RI: '1-b:1.8.0', RU: 'kWh', RT: 'AC', EF: '', ST: 'G' })),
    ...extra,
  });
  // RV is a JSON number written with its three decimals (2935.600), as meters write it
  return text.replace(/"RV":"(-?[0-9.]+)"/g, '"RV":$1');
}

const HASH: Record<OcmfCurve, string> = { secp256r1: 'sha256', secp384r1: 'sha384', brainpool256r1: 'sha256', brainpool384r1: 'sha384' };
const SA: Record<OcmfCurve, string> = {
  secp256r1: 'ECDSA-secp256r1-SHA256',
  secp384r1: 'ECDSA-secp384r1-SHA384',
  brainpool256r1: 'ECDSA-brainpool256r1-SHA256',
  brainpool384r1: 'ECDSA-brainpool384r1-SHA384',
};

/** A signed OCMF record over `payload` (text, signed byte for byte). */
export function signOcmf(meter: TestMeter, payload: string, opts: { sa?: string | null; se?: 'hex' | 'base64' } = {}): string {
  const sig = crypto.sign(HASH[meter.curve], Buffer.from(payload, 'utf8'), { key: meter.privateKey, dsaEncoding: 'der' });
  const sa = opts.sa === undefined ? SA[meter.curve] : opts.sa;
  const section: Record<string, string> = {};
  if (sa !== null) section.SA = sa;
  if (opts.se === 'base64') section.SE = 'base64';
  section.SD = opts.se === 'base64' ? sig.toString('base64') : sig.toString('hex').toUpperCase();
  return `OCMF|${payload}|${JSON.stringify(section)}`;
}

/** One signed reading: the OCMF record of a single register value. */
export function signedReading(meter: TestMeter, at: Date | string | number, wh: number, tx = 'C'): string {
  return signOcmf(meter, ocmfPayload([{ at, wh, tx }]));
}

/** The 2.0.1 signedMeterValue (and 1.6 JSON SignedData) form: base64 OCMF and base64 DER key. */
export function signedMeterValue(ocmf: string, meter: TestMeter | null) {
  return {
    signedMeterData: Buffer.from(ocmf, 'utf8').toString('base64'),
    signingMethod: meter ? SA[meter.curve] : '',
    encodingMethod: 'OCMF',
    publicKey: meter ? meter.publicKey.export({ format: 'der', type: 'spki' }).toString('base64') : '',
  };
}
