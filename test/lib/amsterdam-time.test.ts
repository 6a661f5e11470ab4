// Amsterdam month boundaries (DST included) and the split of a session's register at a month boundary.
import { describe, expect, it } from 'vitest';
import { isoAmsterdam, localParts, monthEnd, monthOf, monthStart, offsetMinutes } from '../../src/lib/amsterdam-time.ts';
import { splitSessionByMonth } from '../../src/domain/ere/counting.ts';
import { reviewDueAt } from '../../src/domain/ere/review.ts';

const pt = (at: string, wh: number, held = false) => ({ at: new Date(at), wh: BigInt(wh), held });

describe('Europe/Amsterdam months', () => {
  it('starts a month at local midnight, UTC+1 in winter and UTC+2 in summer', () => {
    expect(monthStart('2026-11').toISOString()).toBe('2026-10-31T23:00:00.000Z'); // after the October DST change
    expect(monthStart('2026-10').toISOString()).toBe('2026-09-30T22:00:00.000Z');
    expect(monthStart('2026-04').toISOString()).toBe('2026-03-31T22:00:00.000Z'); // after the March DST change
    expect(monthStart('2026-03').toISOString()).toBe('2026-02-28T23:00:00.000Z');
    expect(monthEnd('2026-12').toISOString()).toBe('2026-12-31T23:00:00.000Z');
    expect(monthOf(new Date('2026-10-31T22:59:59Z'))).toBe('2026-10');
    expect(monthOf(new Date('2026-10-31T23:00:00Z'))).toBe('2026-11');
    expect(monthOf(new Date('2026-03-31T21:59:59Z'))).toBe('2026-03');
    expect(monthOf(new Date('2026-03-31T22:00:00Z'))).toBe('2026-04');
  });

  it('reports pending_ready_at style timestamps with the Amsterdam offset', () => {
    // ERE_REVIEW_DAYS 14 after October ends: 2026-11-15 00:00 Amsterdam (UTC+1)
    expect(isoAmsterdam(reviewDueAt('2026-10', 14))).toBe('2026-11-15T00:00:00+01:00');
    // after August: 2026-09-15 00:00 Amsterdam (UTC+2)
    expect(isoAmsterdam(reviewDueAt('2026-08', 14))).toBe('2026-09-15T00:00:00+02:00');
  });
});

describe('the Amsterdam wall clock, each UTC hour asked of the zone database once', () => {
  const fmt = new Intl.DateTimeFormat('en-CA', {
    timeZone: 'Europe/Amsterdam', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
  });
  const zone = (t: number) => {
    const p = Object.fromEntries(fmt.formatToParts(new Date(t)).filter((x) => x.type !== 'literal').map((x) => [x.type, Number(x.value)]));
    return { year: p.year, month: p.month, day: p.day, hour: p.hour, minute: p.minute, second: p.second };
  };
  const offset = (t: number) => {
    const l = zone(t);
    return Math.round((Date.UTC(l.year!, l.month! - 1, l.day!, l.hour!, l.minute!, l.second!) - Math.floor(t / 1000) * 1000) / 60_000);
  };
  const check = (t: number) => {
    expect(localParts(new Date(t)), new Date(t).toISOString()).toEqual(zone(t));
    expect(offsetMinutes(new Date(t)), new Date(t).toISOString()).toBe(offset(t));
  };

  it('is the zone database’s at every minute around each change of offset, 2020–2030, asked twice', () => {
    for (let y = 2020; y <= 2030; y++) {
      for (const m of [2, 9]) {
        // the change is on the last Sunday of March and October at 01:00 UTC: every minute three hours either side
        const last = new Date(Date.UTC(y, m + 1, 0));
        const change = Date.UTC(y, m, last.getUTCDate() - last.getUTCDay(), 1);
        expect(offset(change - 1000)).not.toBe(offset(change));
        for (let t = change - 3 * 3_600_000; t < change + 3 * 3_600_000; t += 60_000 + 7) {
          check(t);
          check(t);
        }
      }
    }
  });

  it('is the zone database’s at random instants, 1900–2100, with milliseconds, asked twice', () => {
    let s = 42;
    const rand = () => ((s = (s * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
    const lo = Date.UTC(1900, 0, 1);
    const hi = Date.UTC(2100, 0, 1);
    for (let i = 0; i < 5_000; i++) {
      const t = Math.floor(lo + rand() * (hi - lo));
      check(t);
      check(t);
    }
  });
});

describe('splitSessionByMonth', () => {
  it('splits a step across the 2026-10-31 → 11-01 midnight (the night after the DST change) by the interpolated register', () => {
    // 22:00 → 02:00 local (UTC+1): readings 21:00Z and 01:00Z, boundary 23:00Z = halfway
    const m = splitSessionByMonth([pt('2026-10-31T21:00:00Z', 100_000), pt('2026-10-31T22:00:00Z', 103_000), pt('2026-11-01T01:00:00Z', 112_001)]);
    // step 2: 103,000 → 112,001 over 3 h; boundary after 1 h: 103,000 + 9,001/3 = 106,000.33 → 106,000
    expect(m.get('2026-10')).toBe(6_000n);
    expect(m.get('2026-11')).toBe(6_001n);
  });

  it('splits across 2026-03-31 → 04-01 (UTC+2 after the March change)', () => {
    // boundary 2026-03-31T22:00Z; readings 20:30Z and 23:30Z: 1.5 h before, 1.5 h after
    const m = splitSessionByMonth([pt('2026-03-31T20:30:00Z', 5_000), pt('2026-03-31T23:30:00Z', 11_001)]);
    expect(m.get('2026-03')).toBe(3_001n); // 5,000 + 6,001/2 = 8,000.5 → 8,001 (half away from zero)
    expect(m.get('2026-04')).toBe(3_000n);
  });

  it('holds out the step ending at a flagged reading and counts on from it', () => {
    const m = splitSessionByMonth([
      pt('2026-05-01T10:00:00Z', 1_000),
      pt('2026-05-01T11:00:00Z', 4_000),
      pt('2026-05-01T12:00:00Z', 900_000, true), // implausible jump: held out
      pt('2026-05-01T13:00:00Z', 902_000),
      pt('2026-05-01T14:00:00Z', 10, true), // register went backwards: flagged, never negative
      pt('2026-05-01T15:00:00Z', 510),
    ]);
    expect(m.get('2026-05')).toBe(3_000n + 2_000n + 500n);
  });

  it('splits a step spanning several months and a reading exactly on the boundary goes to the earlier month', () => {
    const m = splitSessionByMonth([pt('2026-06-30T21:00:00Z', 0), pt('2026-07-31T22:00:00Z', 7_440)]);
    // 744 h from 2026-06-30T21:00Z to 2026-07-31T22:00Z (July start 2026-06-30T22:00Z, August start 2026-07-31T22:00Z)
    expect(m.get('2026-06')).toBe(10n); // 1 h of 744 h × 7,440
    expect(m.get('2026-07')).toBe(7_430n);
    expect(m.has('2026-08')).toBe(false);
  });
});

describe('the signing moment (C5.4)', () => {
  it('drops the part of a step before the machtiging, split at the interpolated register value like a month boundary', () => {
    // signed 2026-10-31T22:30Z; step 103,000 → 112,001 over 22:00Z–01:00Z (3 h), the November boundary at 23:00Z
    const points = [pt('2026-10-31T21:00:00Z', 100_000), pt('2026-10-31T22:00:00Z', 103_000), pt('2026-11-01T01:00:00Z', 112_001)];
    const m = splitSessionByMonth(points, new Map(), new Date('2026-10-31T22:30:00Z'));
    // at 22:30 the register reads 103,000 + 9,001 / 6 = 104,500.17 → 104,500; at 23:00 106,000.33 → 106,000
    expect(m.get('2026-10')).toBe(1_500n);
    expect(m.get('2026-11')).toBe(6_001n);
    // a step that ends at the signing moment counts nothing; one that starts at it counts whole
    expect(splitSessionByMonth(points, new Map(), new Date('2026-10-31T22:00:00Z')).get('2026-10')).toBe(3_000n);
    expect(totalOf(splitSessionByMonth(points, new Map(), new Date('2026-11-01T01:00:00Z')))).toBe(0n);
  });
});

const totalOf = (m: Map<string, bigint>) => [...m.values()].reduce((a, b) => a + b, 0n);
