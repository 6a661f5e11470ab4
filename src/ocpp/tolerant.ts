// C4.1 tolerant reading of what chargers send: known deviations are normalised and counted as quirks;
// what cannot be understood throws Unusable (→ CALLERROR, or quarantine for transaction messages).
// C4.10: every number is bounded before arithmetic, and a string that would be stored may not hold U+0000.
import type { AsidePart } from '../domain/charging/events.ts';
import { divRound, parseBoundedDec } from '../lib/decimal.ts';
import { calendarFieldsExist, canonicalUtcMs } from '../lib/time.ts';

export class Unusable extends Error {}

/** C4.10: an absolute register above 10^12 Wh (a terawatt-hour) is not a meter reading. */
export const MAX_REGISTER_WH = 10n ** 12n;
const INT32_MAX = 2_147_483_647;

/** Charger text inside our own messages (reasons, CALLERROR descriptions) is cut short. */
export function shown(v: string, max = 80): string {
  return JSON.stringify(v.length > max ? v.slice(0, max) + '…' : v);
}

export type QuirkKind =
  | 'enum_case'
  | 'timestamp_without_zone'
  | 'fractional_wh'
  | 'empty_string'
  | 'number_as_string'
  | 'phase_sum'
  | 'phases_incomplete'
  | 'location_ignored'
  | 'rounded_register'
  | 'missing_evse'
  | 'invalid_status_notification';

/** Collects the quirks seen while reading one message. */
/** D138: the largest connector or EVSE number a StatusNotification may name (the dashboard shows 1 to 99). */
export const MAX_CONNECTOR_ID = 99;

/**
 * D182, D256: a charger's timestamp before this is no time of a charge: a clock never set or reset (0000-01-01, 1970,
 * GPS's 1980 and its week-number rollover, an RTC chip's 2000-01-01 and every day it has run on from there). No
 * message of the protocols this gateway speaks was written before 2015 (OCPP-J 1.6 was published in October 2015).
 */
export const EARLIEST_TIME_MS = Date.UTC(2015, 0, 1);
const EARLIEST_TIME_TEXT = '2015-01-01';
/** D182: a timestamp more than this ahead of the gateway's clock is unusable (C5.5 holds one more than 5 min ahead). */
export const MAX_AHEAD_MS = 24 * 3_600_000;

export class Reader {
  /** @param now the gateway's clock when the message arrived (D182: a timestamp a day ahead of it is unusable) */
  constructor(private readonly now?: Date) {}

  /** when the message arrived, by the gateway's clock (the database's, D250): the time of a report that names none */
  received(): Date {
    return this.now ?? new Date();
  }

  readonly quirks: QuirkKind[] = [];
  /** C4.11: unreadable parts of a message that is otherwise applied, each kept aside with its reason */
  readonly aside: AsidePart[] = [];
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
    // PostgreSQL text cannot hold NUL: the field is unusable rather than a database error later
    if (v.includes('\u0000')) throw new Unusable(`${what} contains a NUL character`);
    if (v.trim() === '') {
      this.quirk('empty_string');
      if (required) return '';
      return null;
    }
    return v;
  }

  /**
   * D138: a connector (1.6) or EVSE (2.0.1) number of a StatusNotification: 0 (the whole charger) to MAX_CONNECTOR_ID.
   * A charger has a handful; a number beyond is no connector, and its status would only add a key per message.
   */
  connector(v: unknown, what: string): number {
    const n = this.int(v, what, true);
    if (n < 0 || n > MAX_CONNECTOR_ID) throw new Unusable(`${what} ${n} is not a connector (0 to ${MAX_CONNECTOR_ID})`);
    return n;
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
    // OCPP integers are 32-bit; a larger one would only fail later, in the database
    if (Math.abs(n) > INT32_MAX) throw new Unusable(`${what} is out of range`);
    return Math.round(n);
  }

  /**
   * ISO 8601 timestamp; one without zone is read as UTC (counted). D255: RFC 3339's other spellings of the same
   * instant (§5.6 NOTE: a lower-case `t` and `z`, a space for the `T`) are read as the upper-case form, not counted.
   */
  time(v: unknown, what: string): Date {
    if (typeof v === 'string') {
      // the form nearly every charger sends, read without the general date parser (same instant)
      const ms = canonicalUtcMs(v);
      if (ms !== null) return this.usableTime(ms, what);
    }
    if (typeof v !== 'string' || !v.trim()) throw new Unusable(`${what} must be a timestamp`);
    let s = v.trim();
    // D255: `2026-11-29t15:38:25z` and `2026-11-29 15:38:25Z` are `2026-11-29T15:38:25Z`
    if (/^\d{4}-\d{2}-\d{2}[t ]\d{2}:/.test(s)) s = `${s.slice(0, 10)}T${s.slice(11)}`;
    if (s.endsWith('z')) s = `${s.slice(0, -1)}Z`;
    if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(s)) {
      this.quirk('timestamp_without_zone');
      s += 'Z';
    }
    const canonical = canonicalUtcMs(s);
    if (canonical !== null) return this.usableTime(canonical, what);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(s)) throw new Unusable(`${what} is not an ISO 8601 timestamp`);
    const d = new Date(s);
    if (Number.isNaN(d.getTime()) || !calendarFieldsExist(s)) throw new Unusable(`${what} is not a valid timestamp`);
    return this.usableTime(d.getTime(), what);
  }

  /**
   * A time the message's meaning does not depend on (a StatusNotification's): an unusable one is the message's
   * arrival, as a missing one is (D256: a reset clock's status is still the connector's status).
   */
  timeOrReceived(v: unknown, what: string): Date {
    if (v === undefined) return this.received();
    try {
      return this.time(v, what);
    } catch (err) {
      if (err instanceof Unusable) return this.received();
      throw err;
    }
  }

  /** D182, D256: a time from 2015-01-01 up to a day ahead of the gateway's clock; anything else is no reading's time. */
  private usableTime(ms: number, what: string): Date {
    if (ms < EARLIEST_TIME_MS) throw new Unusable(`${what} is before ${EARLIEST_TIME_TEXT} (a clock never set, or reset)`);
    if (this.now && ms > this.now.getTime() + MAX_AHEAD_MS) throw new Unusable(`${what} is more than a day ahead of the gateway's clock`);
    return new Date(ms);
  }

  /** An enum value; a different letter case is accepted (counted). */
  enumOf<T extends string>(values: readonly T[], v: unknown, what: string): T {
    if (typeof v !== 'string') throw new Unusable(`${what} must be one of ${values.join(', ')}`);
    if ((values as readonly string[]).includes(v)) return v as T;
    const hit = values.find((x) => x.toLowerCase() === v.trim().toLowerCase());
    if (!hit) throw new Unusable(`${what} ${shown(v)} is not one of ${values.join(', ')}`);
    this.quirk('enum_case');
    return hit;
  }

  /** A decimal value (string in 1.6, number in 2.0.1) at scale 6, bounded (C4.10), without float arithmetic. */
  decimal(v: unknown, what: string): bigint {
    if ((typeof v === 'number' || typeof v === 'string')) {
      const d = parseBoundedDec(v, 6);
      if (d !== null) return d;
      throw new Unusable(`${what} is not a usable number (at most 15 significant digits, below 10^15)`);
    }
    throw new Unusable(`${what} must be a number`);
  }

  /** An absolute energy register in Wh (1.6 meterStart/meterStop): fractional Wh rounded (counted), bounded. */
  registerWh(v: unknown, what: string): bigint {
    const wh = this.boundedWh(this.decimal(v, what), what, true);
    // D182: a register counts up from zero; a negative one is no reading
    if (wh < 0n) throw new Unusable(`${what} is a negative register value`);
    return wh;
  }

  /** Units at scale 6 of Wh → integer Wh, at most 10^12 in absolute value (C4.10). */
  boundedWh(units: bigint, what: string, countFraction: boolean): bigint {
    if (countFraction && units % 1_000_000n !== 0n) this.quirk('fractional_wh');
    const wh = divRound(units, 1_000_000n);
    if (wh > MAX_REGISTER_WH || wh < -MAX_REGISTER_WH) throw new Unusable(`${what} is above 10^12 Wh`);
    return wh;
  }
}
