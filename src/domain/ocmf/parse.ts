// OCMF (Open Charge Metering Format): `OCMF|{payload}|{signature}`, as meters that sign under calibration law send
// it, and the envelopes it arrives in: a 1.6 SignedData value (the OCMF string itself, or a JSON object with 2.0.1's
// signedMeterValue fields) and a 2.0.1 signedMeterValue (kept as JSON by the edge). Pure: no database, no crypto.
// The signature covers the payload section's bytes exactly as received, so the payload text is kept untouched.

/** One meter reading of an OCMF payload (RD[]). */
export interface OcmfReading {
  /** TM as sent, e.g. "2018-07-24T13:22:04,000+0200 S" */
  tm: string;
  /** TM as an instant, or null when unreadable */
  at: Date | null;
  /** TM's time status: S synchronised, I informative, R relative, U unknown (null: not given) */
  timeStatus: string | null;
  /** TX: B(egin), C(harging), X(exception), E(nd), L(imit), R(ate), T(ariff), S(uspended) */
  tx: string | null;
  /** RV as a number, RU its unit (kWh, Wh, ...) */
  value: number;
  /** the decimals RV was written with (2935.600 → 3): the meter's resolution */
  decimals: number;
  unit: string;
  /** RI (OBIS id), ST (meter state), EF (error flags) */
  ri: string | null;
  st: string | null;
  ef: string | null;
}

export interface OcmfRecord {
  /** the payload section exactly as received: the signed bytes */
  payloadText: string;
  payload: Record<string, unknown>;
  signature: { SA: string | null; SE: string | null; SM: string | null; SD: string };
  readings: OcmfReading[];
}

/** What a signed meter value holds once its envelope is opened. */
export type SignedEnvelope =
  | { kind: 'ocmf'; ocmf: string; publicKey: string | null; signingMethod: string | null }
  /** signed data in another format (e.g. a vendor's binary format): it cannot be checked here */
  | { kind: 'other'; encodingMethod: string | null }
  | { kind: 'malformed'; reason: string };

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/** An OCMF string given as is or base64-encoded (2.0.1 signedMeterData is base64); null when it is neither. */
function ocmfText(data: string): string | null {
  const t = data.trim();
  if (t.startsWith('OCMF|')) return t;
  const compact = t.replace(/\s+/g, '');
  if (compact.length >= 8 && BASE64.test(compact)) {
    const decoded = Buffer.from(compact.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8').trim();
    if (decoded.startsWith('OCMF|')) return decoded;
  }
  return null;
}

/**
 * Opens a stored signed value: the OCMF string itself (or base64 of it), or a JSON object with the signedMeterValue
 * fields `signedMeterData`, `signingMethod`, `encodingMethod`, `publicKey`.
 */
export function unwrapSignedData(signedData: string): SignedEnvelope {
  const text = signedData.trim();
  if (text.startsWith('{')) {
    let obj: unknown;
    try {
      obj = JSON.parse(text);
    } catch {
      return { kind: 'malformed', reason: 'the signed value is not valid JSON' };
    }
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return { kind: 'malformed', reason: 'the signed value is not an object' };
    const o = obj as Record<string, unknown>;
    const data = str(o.signedMeterData);
    const encodingMethod = str(o.encodingMethod);
    if (data === null) return { kind: 'malformed', reason: 'signedMeterData is missing' };
    const ocmf = ocmfText(data);
    if (ocmf !== null) return { kind: 'ocmf', ocmf, publicKey: str(o.publicKey), signingMethod: str(o.signingMethod) };
    // declared OCMF but not readable as OCMF: broken, not merely another format
    if (encodingMethod !== null && /^ocmf$/i.test(encodingMethod)) return { kind: 'malformed', reason: 'signedMeterData is not an OCMF record' };
    return { kind: 'other', encodingMethod };
  }
  const ocmf = ocmfText(text);
  return ocmf !== null ? { kind: 'ocmf', ocmf, publicKey: null, signingMethod: null } : { kind: 'other', encodingMethod: null };
}

/** OCMF TM: `YYYY-MM-DDThh:mm:ss,fff±hhmm S` (comma or dot, offset with or without colon, or Z). */
const TM = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(?:[,.](\d{1,9}))?\s*(Z|[+-]\d{2}:?\d{2})?(?:\s+([A-Z]))?$/;

export function parseOcmfTime(tm: string): { at: Date | null; timeStatus: string | null } {
  const m = TM.exec(tm.trim());
  if (!m) return { at: null, timeStatus: null };
  const [, date, time, frac, zone, status] = m;
  const ms = frac ? frac.padEnd(3, '0').slice(0, 3) : '000';
  const offset = !zone || zone === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const at = new Date(`${date}T${time}.${ms}${offset}`);
  return { at: Number.isNaN(at.getTime()) ? null : at, timeStatus: status ?? null };
}

/** The decimals of a number as written; JSON.parse forgets trailing zeros (2935.600), so the raw text is read. */
function decimalsOf(raw: string | undefined, value: number): number {
  const text = raw ?? String(value);
  const [mantissa = '', exp = '0'] = text.toLowerCase().split('e');
  return Math.max(0, (mantissa.split('.')[1]?.length ?? 0) - Number(exp));
}

/** The RV values of the payload text as written, in order (RV appears only in RD entries). */
function rawValues(payloadText: string): string[] {
  return [...payloadText.matchAll(/"RV"\s*:\s*"?\s*(-?[0-9][0-9.eE+-]*)/g)].map((m) => m[1]!);
}

function readingOf(raw: unknown, rawRv: string | undefined): OcmfReading | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const r = raw as Record<string, unknown>;
  const tm = str(r.TM);
  const value = typeof r.RV === 'number' ? r.RV : typeof r.RV === 'string' && r.RV.trim() !== '' ? Number(r.RV) : NaN;
  const unit = str(r.RU);
  if (tm === null || !Number.isFinite(value) || unit === null) return null;
  return { tm, ...parseOcmfTime(tm), tx: str(r.TX), value, decimals: decimalsOf(rawRv, value), unit, ri: str(r.RI), st: str(r.ST), ef: typeof r.EF === 'string' ? r.EF : null };
}

/** Parses `OCMF|{payload}|{signature}`. The payload is everything between the first and the last `|`. */
export function parseOcmf(text: string): { ok: true; record: OcmfRecord } | { ok: false; reason: string } {
  const t = text.trim();
  if (!t.startsWith('OCMF|')) return { ok: false, reason: 'not an OCMF record' };
  const last = t.lastIndexOf('|');
  if (last <= 4) return { ok: false, reason: 'the OCMF record has no signature section' };
  const payloadText = t.slice(5, last);
  let payload: unknown;
  let sig: unknown;
  try {
    payload = JSON.parse(payloadText);
    sig = JSON.parse(t.slice(last + 1));
  } catch {
    return { ok: false, reason: 'an OCMF section is not valid JSON' };
  }
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return { ok: false, reason: 'the OCMF payload is not an object' };
  if (typeof sig !== 'object' || sig === null || Array.isArray(sig)) return { ok: false, reason: 'the OCMF signature section is not an object' };
  const p = payload as Record<string, unknown>;
  const s = sig as Record<string, unknown>;
  const sd = str(s.SD);
  if (sd === null) return { ok: false, reason: 'the OCMF signature section has no SD' };
  if (!Array.isArray(p.RD) || p.RD.length === 0) return { ok: false, reason: 'the OCMF payload has no readings (RD)' };
  const readings: OcmfReading[] = [];
  const rv = rawValues(payloadText);
  const rawRv = rv.length === p.RD.length ? rv : [];
  for (const [i, raw] of p.RD.entries()) {
    const r = readingOf(raw, rawRv[i]);
    if (r === null) return { ok: false, reason: 'an OCMF reading lacks TM, RV or RU' };
    readings.push(r);
  }
  return { ok: true, record: { payloadText, payload: p, signature: { SA: str(s.SA), SE: str(s.SE), SM: str(s.SM), SD: sd }, readings } };
}
