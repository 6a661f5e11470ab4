// C6.8: every timestamp the API (and the OCPP gateway) hands out is UTC 'YYYY-MM-DDTHH:mm:ssZ', no milliseconds.
export function isoUtc(d: Date | string): string {
  return new Date(d).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The value of `len` decimal digits of s from `at`, or -1 when one of them is not a digit. */
function digitsAt(s: string, at: number, len: number): number {
  let v = 0;
  for (let i = at; i < at + len; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/**
 * Whether the calendar fields of an ISO 8601 text (`YYYY-MM-DDTHH:MM[:SS]…`) exist: month 1–12, a day of that month,
 * hour 0–23, minute and second 0–59. The general date parser moves 2026-04-31 to 1 May and 2026-02-30 to 2 March
 * (D110); a charger's impossible date is not to be read as another day.
 */
export function calendarFieldsExist(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(s);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [number, number, number, number, number, number];
  return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month) && hour <= 23 && minute <= 59 && second <= 59;
}

const daysIn = (year: number, month: number) =>
  month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;

/**
 * The instant of a timestamp in the form chargers nearly always send, `YYYY-MM-DDTHH:MM:SS[.fraction]Z` with every
 * field inside its calendar (a day that exists in its month, hours 00–23, no leap second, 1 to 9 fraction digits,
 * years 100–9999), as milliseconds since the epoch; null for any other text, which the caller gives to `new Date`.
 * Within that form it gives exactly what `new Date(s).getTime()` gives (fraction digits past the millisecond
 * dropped, as V8 does), without the general date parser: in a profile of the gateway under load that parser was the
 * largest single part of reading a MeterValues.
 */
export function canonicalUtcMs(s: string): number | null {
  const n = s.length;
  if (n < 20 || n > 30 || s.charCodeAt(n - 1) !== 90 /* Z */) return null;
  if (s[4] !== '-' || s[7] !== '-' || s[10] !== 'T' || s[13] !== ':' || s[16] !== ':') return null;
  const year = digitsAt(s, 0, 4);
  const month = digitsAt(s, 5, 2);
  const day = digitsAt(s, 8, 2);
  const hour = digitsAt(s, 11, 2);
  const minute = digitsAt(s, 14, 2);
  const second = digitsAt(s, 17, 2);
  if (year < 100 || month < 1 || month > 12 || day < 1 || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return null;
  if (day > daysIn(year, month)) return null;
  let ms = 0;
  if (n > 20) {
    // '.', then 1 to 9 digits before the Z
    if (s[19] !== '.' || n < 22) return null;
    let scale = 100;
    for (let i = 20; i < n - 1; i++) {
      const c = s.charCodeAt(i) - 48;
      if (c < 0 || c > 9) return null;
      ms += c * scale;
      scale = Math.floor(scale / 10);
    }
  }
  return Date.UTC(year, month - 1, day, hour, minute, second, ms);
}
