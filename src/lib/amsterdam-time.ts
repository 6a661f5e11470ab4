// Europe/Amsterdam calendar periods (C2.4, C6.8): months, quarters and days are Amsterdam local periods, whose
// boundaries move with daylight saving time (UTC+1 in winter, UTC+2 in summer). Shared by every area (energy, ERE,
// charging, the HTTP edge), so it lives in src/lib and no domain folder imports another for the calendar.
export const TIME_ZONE = 'Europe/Amsterdam';

const partsFmt = new Intl.DateTimeFormat('en-CA', {
  timeZone: TIME_ZONE,
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  hourCycle: 'h23',
});

export interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The wall clock in Amsterdam at an instant, as the time zone database (Intl) gives it. */
function zoneParts(instant: Date): LocalParts {
  const p: Record<string, number> = {};
  for (const part of partsFmt.formatToParts(instant)) {
    if (part.type !== 'literal') p[part.type] = Number(part.value);
  }
  return { year: p.year!, month: p.month!, day: p.day!, hour: p.hour!, minute: p.minute!, second: p.second! };
}

/** Amsterdam's offset from UTC at an instant, in ms (to the second), from the time zone database. */
function zoneOffsetMs(t: number): number {
  const l = zoneParts(new Date(t));
  return Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute, l.second) - Math.floor(t / 1000) * 1000;
}

const HOUR_MS = 3_600_000;
/**
 * The offset of each UTC hour asked about, where it holds through the whole hour (the zone changes its offset on
 * the hour: 01:00 UTC in spring and autumn). Intl's formatToParts costs microseconds a call and a month's bounds
 * take four, so a batch of 1,000 monthly deliveries spent most of its CPU there; the offsets of an hour are the same
 * every time, so each hour is asked once. An hour in which the offset would change (none between 1850 and 2100 in
 * the zone data of Node 20) would not be kept, and be asked each time.
 */
const hourOffsets = new Map<number, number>();
const HOUR_OFFSETS_MAX = 200_000; // about 23 years of distinct hours, a few MB

function offsetMsAt(t: number): number {
  const hour = Math.floor(t / HOUR_MS);
  const known = hourOffsets.get(hour);
  if (known !== undefined) return known;
  const atStart = zoneOffsetMs(hour * HOUR_MS);
  if (zoneOffsetMs(hour * HOUR_MS + HOUR_MS - 1000) !== atStart) return zoneOffsetMs(t);
  if (hourOffsets.size >= HOUR_OFFSETS_MAX) hourOffsets.clear();
  hourOffsets.set(hour, atStart);
  return atStart;
}

export function localParts(instant: Date): LocalParts {
  const t = instant.getTime();
  // the wall clock is the instant moved by the offset, to the second (as the zone database gives it)
  const d = new Date(Math.floor(t / 1000) * 1000 + offsetMsAt(t));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
}

/** Offset of Amsterdam from UTC at an instant, in minutes (60 or 120). */
export function offsetMinutes(instant: Date): number {
  return Math.round(offsetMsAt(instant.getTime()) / 60_000);
}

/** The instant of an Amsterdam wall-clock time (midnight never falls in a DST gap in this zone). */
export function localToInstant(year: number, month: number, day: number, hour = 0, minute = 0): Date {
  const wall = Date.UTC(year, month - 1, day, hour, minute);
  let t = wall - offsetMinutes(new Date(wall)) * 60_000;
  t = wall - offsetMinutes(new Date(t)) * 60_000;
  return new Date(t);
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** 'YYYY-MM' of the Amsterdam calendar month an instant falls in. */
export function monthOf(instant: Date): string {
  const l = localParts(instant);
  return `${l.year}-${pad(l.month)}`;
}

/** 'YYYY-MM-DD' of the Amsterdam calendar day. */
export function dateOf(instant: Date): string {
  const l = localParts(instant);
  return `${l.year}-${pad(l.month)}-${pad(l.day)}`;
}

export function parseMonth(month: string): { year: number; month: number } {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(month);
  if (!m) throw new Error(`not a month: ${month}`);
  return { year: Number(m[1]), month: Number(m[2]) };
}

export function isMonth(value: unknown): value is string {
  return typeof value === 'string' && /^(\d{4})-(0[1-9]|1[0-2])$/.test(value);
}

export function nextMonth(month: string): string {
  const { year, month: m } = parseMonth(month);
  return m === 12 ? `${year + 1}-01` : `${year}-${pad(m + 1)}`;
}

/** Months from a to b inclusive ('YYYY-MM' strings compare in time order). */
export function monthRange(a: string, b: string): string[] {
  const out: string[] = [];
  for (let m = a; m <= b; m = nextMonth(m)) out.push(m);
  return out;
}

/** Start of an Amsterdam month as a UTC instant. */
export function monthStart(month: string): Date {
  const { year, month: m } = parseMonth(month);
  return localToInstant(year, m, 1);
}

/** End (exclusive) of an Amsterdam month: the start of the next one. */
export function monthEnd(month: string): Date {
  return monthStart(nextMonth(month));
}

/** Month boundaries strictly inside (from, to): the instants at which a new Amsterdam month starts. */
export function monthBoundariesBetween(from: Date, to: Date): Date[] {
  const out: Date[] = [];
  let b = monthEnd(monthOf(from));
  while (b.getTime() < to.getTime()) {
    out.push(b);
    b = monthEnd(monthOf(b));
  }
  return out;
}

/** '2026-Q3' of a month. */
export function quarterOfMonth(month: string): string {
  const { year, month: m } = parseMonth(month);
  return `${year}-Q${Math.floor((m - 1) / 3) + 1}`;
}

/** Add calendar days to an Amsterdam date and return that day's local midnight. */
export function localMidnightPlusDays(year: number, month: number, day: number, days: number): Date {
  const d = new Date(Date.UTC(year, month - 1, day + days));
  return localToInstant(d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate());
}

export { isoUtc } from './time.ts';

/** An instant with the Amsterdam offset, e.g. '2026-12-15T00:00:00+01:00' (pending_ready_at, C6.8). */
export function isoAmsterdam(d: Date): string {
  const l = localParts(d);
  const off = offsetMinutes(d);
  const sign = off >= 0 ? '+' : '-';
  const a = Math.abs(off);
  return `${l.year}-${pad(l.month)}-${pad(l.day)}T${pad(l.hour)}:${pad(l.minute)}:${pad(l.second)}${sign}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}

/** Whole Amsterdam calendar days from local date a to local date b ('YYYY-MM-DD'). */
export function daysBetweenDates(a: string, b: string): number {
  const pa = a.split('-').map(Number) as [number, number, number];
  const pb = b.split('-').map(Number) as [number, number, number];
  return Math.round((Date.UTC(pb[0], pb[1] - 1, pb[2]) - Date.UTC(pa[0], pa[1] - 1, pa[2])) / 86_400_000);
}

const MONTH_NAMES = {
  nl: ['januari', 'februari', 'maart', 'april', 'mei', 'juni', 'juli', 'augustus', 'september', 'oktober', 'november', 'december'],
  en: ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'],
} as const;

/**
 * C7.3: an instant as a person reads it on a page or in an e-mail, in Amsterdam time with the zone named:
 * '22 november 2026, 11:00 (CET, Europe/Amsterdam)'; CEST in summer.
 */
export function humanAmsterdam(d: Date, locale: 'nl' | 'en'): string {
  const l = localParts(d);
  const zone = offsetMinutes(d) === 120 ? 'CEST' : 'CET';
  return `${l.day} ${MONTH_NAMES[locale][l.month - 1]} ${l.year}, ${pad(l.hour)}:${pad(l.minute)} (${zone}, ${TIME_ZONE})`;
}
