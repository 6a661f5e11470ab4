// C4.10: a log line carries at most 2 KiB of charger-supplied text per field. The logger (src/logger.ts) passes
// every logged object through capLogValue: strings are cut at LOG_STRING_MAX characters with a marker saying how
// much was cut, errors are serialized here so their message and stack are cut too, and deep or wide structures
// are bounded, so no frame a charger sends can turn into a megabyte log line.
import pino from 'pino';

export const LOG_STRING_MAX = 2048;
/** nesting below this depth is replaced by a marker */
const MAX_DEPTH = 8;
/** array items and object keys beyond this are dropped, with a marker */
const MAX_ENTRIES = 100;

export function capLogString(s: string): string {
  return s.length > LOG_STRING_MAX ? `${s.slice(0, LOG_STRING_MAX)}…[${s.length - LOG_STRING_MAX} more chars cut]` : s;
}

function isPlain(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function cap(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return capLogString(v);
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof Error) {
    // pino's own serializer (message and stack with causes), copied to a plain object so it is capped like the rest
    const serialized = pino.stdSerializers.err(v) as unknown as Record<string, unknown>;
    const plain: Record<string, unknown> = {};
    for (const key in serialized) if (serialized[key] !== undefined) plain[key] = serialized[key];
    return cap(plain, depth);
  }
  if (Buffer.isBuffer(v)) return v.length > LOG_STRING_MAX / 2 ? `[Buffer of ${v.length} bytes]` : v;
  // other class instances (requests, replies, dates) are left to pino's serializers, which cap their output
  if (!Array.isArray(v) && !isPlain(v)) return v;
  if (depth >= MAX_DEPTH) return '[nested too deep]';
  if (Array.isArray(v)) {
    const out = v.slice(0, MAX_ENTRIES).map((x) => cap(x, depth + 1));
    if (v.length > MAX_ENTRIES) out.push(`[${v.length - MAX_ENTRIES} more items cut]`);
    return out;
  }
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const key in v) {
    if (!Object.prototype.hasOwnProperty.call(v, key)) continue;
    if (n++ >= MAX_ENTRIES) {
      out['…'] = 'more keys cut';
      break;
    }
    out[capLogString(key)] = cap((v as Record<string, unknown>)[key], depth + 1);
  }
  return out;
}

/** A copy of a value to log with every string capped (the caller's object is never changed). */
export function capLogValue(v: unknown): unknown {
  return cap(v, 0);
}
