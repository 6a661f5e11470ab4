// C4.1 tolerant reading of what chargers send: known deviations are normalised and counted as quirks;
// what cannot be understood throws Unusable (→ CALLERROR, or quarantine for transaction messages).
import { toDec } from '../lib/decimal.ts';

export class Unusable extends Error {}

export type QuirkKind =
  | 'enum_case'
  | 'timestamp_without_zone'
  | 'fractional_wh'
  | 'empty_string'
  | 'number_as_string'
  | 'phase_sum'
  | 'missing_evse'
  | 'invalid_status_notification';

/** Collects the quirks seen while reading one message. */
export class Reader {
  readonly quirks: QuirkKind[] = [];
  quirk(k: QuirkKind): void {
    this.quirks.push(k);
  }

  obj(v: unknown, what: string): Record<string, unknown> {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Unusable(`${what} must be an object`);
    return v as Record<string, unknown>;
  }

  arr(v: unknown, what: string): unknown[] {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v)) throw new Unusable(`${what} must be an array`);
    return v;
  }

  /** A string; an empty one is read as absent (counted). */
  str(v: unknown, what: string, required: true): string;
  str(v: unknown, what: string, required?: false): string | null;
  str(v: unknown, what: string, required = false): string | null {
    if (v === undefined || v === null) {
      if (required) throw new Unusable(`${what} is required`);
      return null;
    }
    if (typeof v === 'number') {
      this.quirk('number_as_string');
      return String(v);
    }
    if (typeof v !== 'string') throw new Unusable(`${what} must be a string`);
    if (v.trim() === '') {
      this.quirk('empty_string');
      if (required) return '';
      return null;
    }
    return v;
  }

  int(v: unknown, what: string, required: true): number;
  int(v: unknown, what: string, required?: false): number | null;
  int(v: unknown, what: string, required = false): number | null {
    if (v === undefined || v === null || v === '') {
      if (required) throw new Unusable(`${what} is required`);
      return null;
    }
    let n: number;
    if (typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v.trim())) {
      this.quirk('number_as_string');
      n = Number(v);
    } else if (typeof v === 'number' && Number.isFinite(v)) n = v;
    else throw new Unusable(`${what} must be an integer`);
    return Math.round(n);
  }

  /** ISO 8601 timestamp; one without zone is read as UTC (counted). */
  time(v: unknown, what: string): Date {
    if (typeof v !== 'string' || !v.trim()) throw new Unusable(`${what} must be a timestamp`);
    let s = v.trim();
    if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(s)) {
      this.quirk('timestamp_without_zone');
      s = s.replace(' ', 'T') + 'Z';
    }
    if (!/^\d{4}-\d{2}-\d{2}T/.test(s)) throw new Unusable(`${what} is not an ISO 8601 timestamp`);
    const d = new Date(s);
    if (Number.isNaN(d.getTime())) throw new Unusable(`${what} is not a valid timestamp`);
    return d;
  }

  /** An enum value; a different letter case is accepted (counted). */
  enumOf<T extends string>(values: readonly T[], v: unknown, what: string): T {
    if (typeof v !== 'string') throw new Unusable(`${what} must be one of ${values.join(', ')}`);
    if ((values as readonly string[]).includes(v)) return v as T;
    const hit = values.find((x) => x.toLowerCase() === v.trim().toLowerCase());
    if (!hit) throw new Unusable(`${what} "${v}" is not one of ${values.join(', ')}`);
    this.quirk('enum_case');
    return hit;
  }

  /** A decimal value (string in 1.6, number in 2.0.1) at scale 6, without binary float arithmetic. */
  decimal(v: unknown, what: string): bigint {
    if (typeof v === 'number' && Number.isFinite(v)) return toDec(v, 6);
    if (typeof v === 'string') {
      const t = v.trim();
      if (/^[+-]?\d+(\.\d+)?$/.test(t)) return toDec(t, 6);
      const n = Number(t);
      if (t !== '' && Number.isFinite(n)) return toDec(n, 6);
    }
    throw new Unusable(`${what} must be a number`);
  }
}
