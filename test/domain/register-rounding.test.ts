// D96: a register value that is another written coarser (a power of ten of Wh, half away from zero) is the same reading.
import { describe, expect, it } from 'vitest';
import { isRoundingOf } from '../../src/domain/charging/readings.ts';

describe('isRoundingOf', () => {
  it('recognises a value rounded to 10 Wh … 1 MWh, half away from zero, and nothing else', () => {
    expect(isRoundingOf(200_000n, 200_003n)).toBe(true); // "200.00" kWh beside 200,003 Wh
    expect(isRoundingOf(207_010n, 207_005n)).toBe(true); // half away from zero
    expect(isRoundingOf(207_000n, 207_004n)).toBe(true);
    expect(isRoundingOf(207_000n, 207_499n)).toBe(true); // to whole kWh
    expect(isRoundingOf(208_000n, 207_499n)).toBe(false);
    expect(isRoundingOf(207_100n, 207_049n)).toBe(false); // 207,049 rounds to 207,000 at every power of ten
    expect(isRoundingOf(207_004n, 207_004n)).toBe(false); // the value itself is not a rounding of it
    expect(isRoundingOf(207_003n, 207_004n)).toBe(false); // no trailing zero: not a coarser writing
    expect(isRoundingOf(3_500n, 3_000n)).toBe(false);
  });
});
