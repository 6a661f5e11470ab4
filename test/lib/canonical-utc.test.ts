// canonicalUtcMs reads the common timestamp form without the general date parser; wherever it answers, its answer
// must be the instant `new Date(s)` gives, and it must leave every other text to `new Date` (null).
import { describe, expect, it } from 'vitest';
import { canonicalUtcMs } from '../../src/lib/time.ts';
import { Reader, Unusable } from '../../src/ocpp/tolerant.ts';
import { Prng } from '../fuzz/prng.ts';

const pad = (v: number, len: number) => String(v).padStart(len, '0');

describe('canonicalUtcMs', () => {
  it('reads the common forms as the Date parser does', () => {
    const cases = ['2026-11-28T07:10:38Z', '2026-11-28T07:10:38.123Z', '2026-11-28T07:10:38.1Z', '2026-11-28T07:10:38.999999999Z', '2024-02-29T23:59:59Z', '0100-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z'];
    for (const s of cases) expect(canonicalUtcMs(s), s).toBe(new Date(s).getTime());
  });

  it('leaves to the Date parser what it does not read itself, including what that parser rolls over or refuses', () => {
    const others = [
      '2026-02-30T00:00:00Z', // rolled over to 2 March by V8
      '2026-04-31T10:00:00Z',
      '2026-01-01T24:00:00Z', // the next midnight to V8
      '2026-01-01T23:59:60Z',
      '2026-13-01T00:00:00Z',
      '2026-00-01T00:00:00Z',
      '2026-01-00T00:00:00Z',
      '2026-01-01T10:00:00.Z',
      '2026-01-01T10:00:00.1234567890Z', // ten fraction digits
      '2026-01-01T10:00Z',
      '2026-01-01T10:00:00+01:00',
      '2026-01-01T10:00:00z',
      '2026-01-01t10:00:00Z',
      '2026-01-01 10:00:00Z',
      ' 2026-01-01T10:00:00Z',
      '2026-01-01T10:00:00',
      '0099-01-01T00:00:00Z', // two-digit years are 1900 + y to Date.UTC
      '+002026-01-01T00:00:00Z',
      '2026-1-01T10:00:00Z',
      '２０２６-01-01T10:00:00Z',
      '',
    ];
    for (const s of others) expect(canonicalUtcMs(s), JSON.stringify(s)).toBeNull();
  });

  it('agrees with the Date parser on 200,000 generated near-canonical strings (seeded)', () => {
    const seed = 20261128;
    const g = new Prng(seed);
    const r = () => g.next();
    const pick = <T,>(xs: readonly T[]) => g.pick(xs);
    const field = (len: number, max: number) => (r() < 0.9 ? pad(Math.floor(r() * max), len) : pick(['', '0', '1x', '-1', '999', ' 1', '٣٣'.slice(0, len)]));
    let read = 0;
    for (let i = 0; i < 200_000; i++) {
      const s =
        field(4, 10_000) +
        (r() < 0.98 ? '-' : pick(['/', '', ' '])) +
        field(2, 14) +
        '-' +
        field(2, 33) +
        (r() < 0.97 ? 'T' : pick(['t', ' ', ''])) +
        field(2, 26) +
        ':' +
        field(2, 62) +
        (r() < 0.98 ? ':' : '') +
        field(2, 62) +
        (r() < 0.5 ? '' : '.' + Array.from({ length: Math.floor(r() * 11) }, () => (r() < 0.97 ? String(Math.floor(r() * 10)) : 'a')).join('')) +
        (r() < 0.95 ? 'Z' : pick(['z', '+01:00', '', 'Z ']));
      const fast = canonicalUtcMs(s);
      if (fast === null) continue;
      read++;
      const slow = new Date(s).getTime();
      if (fast !== slow) throw new Error(`seed ${seed}, ${JSON.stringify(s)}: ${fast} against the Date parser's ${slow}`);
    }
    // about a third of the generated strings are in the form (the rest test the refusals): the comparison covered them
    expect(read).toBeGreaterThan(40_000);
  });

  it('Reader.time gives the same instants through it, and refuses a date that does not exist', () => {
    const r = new Reader();
    expect(r.time('2026-11-28T07:10:38.5Z', 't').toISOString()).toBe('2026-11-28T07:10:38.500Z');
    expect(r.time('2026-11-28T07:10:38', 't').toISOString()).toBe('2026-11-28T07:10:38.000Z');
    expect(r.quirks).toContain('timestamp_without_zone');
    expect(() => r.time('2026-01-01T23:59:60Z', 't')).toThrow(Unusable);
    // a day that does not exist is not another day (D110): the Date parser rolls these over to 2 March and 1 May
    for (const bad of ['2026-02-30T00:00:00Z', '2026-04-31T10:00:00Z', '2026-04-31T10:00:00.5Z', '2026-02-29T08:00:00+01:00', '2026-01-01T24:00:00Z', '2026-04-31T10:00:00']) {
      expect(() => r.time(bad, 't'), bad).toThrow(Unusable);
    }
    expect(r.time('2024-02-29T08:00:00+01:00', 't').toISOString()).toBe('2024-02-29T07:00:00.000Z');
    expect(() => r.time('yesterday', 't')).toThrow(Unusable);
  });
});
