// bench:ocpp --repeat: the rounds alternate which server goes first, and each ratio is summarised by its median
// and range over the rounds (bench/rounds.ts).
import { describe, expect, it } from 'vitest';
import { median, roundOrder, summariseRatios } from '../../bench/rounds.ts';

describe('benchmark rounds', () => {
  it('alternates which server goes first', () => {
    expect([0, 1, 2, 3].map((k) => roundOrder(['gateway', 'bare'], k))).toEqual([
      ['gateway', 'bare'],
      ['bare', 'gateway'],
      ['gateway', 'bare'],
      ['bare', 'gateway'],
    ]);
    expect(roundOrder(['gateway'], 1)).toEqual(['gateway']);
  });

  it('takes the median of an odd and of an even count, and none of nothing', () => {
    expect(median([1.95, 1.52, 1.89])).toBe(1.89);
    expect(median([1.52, 1.95, 1.89, 1.6])).toBe(1.75);
    expect(median([])).toBeNull();
  });

  it('summarises each ratio over the rounds, skipping rounds without it', () => {
    const s = summariseRatios([
      { cpu_us_per_call: 1.89, storm_reconnect_boot_ms: null },
      { cpu_us_per_call: 1.95, storm_reconnect_boot_ms: 1.05 },
      null,
      { cpu_us_per_call: 1.52, storm_reconnect_boot_ms: 1.54 },
    ]);
    expect(s.cpu_us_per_call).toEqual({ rounds: [1.89, 1.95, null, 1.52], median: 1.89, min: 1.52, max: 1.95 });
    expect(s.storm_reconnect_boot_ms).toEqual({ rounds: [null, 1.05, null, 1.54], median: 1.3, min: 1.05, max: 1.54 });
  });
});
