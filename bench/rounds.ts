// Repeated rounds of the side-by-side benchmark (`bench:ocpp --repeat N`). On a shared machine the same code
// measured 354 and 422 µs per MeterValues in two runs a few minutes apart: one pair of runs can say more about the
// machine's minute than about the code. Rounds alternate which server goes first, so a drift over time falls on
// both, and the ratios are summarised by their median and range.

/** The order of the servers in round `round` (0-based): as given in even rounds, reversed in odd ones. */
export function roundOrder<T>(targets: readonly T[], round: number): T[] {
  return round % 2 === 0 ? [...targets] : [...targets].reverse();
}

/** The median of the numbers given (the mean of the middle two for an even count); null when there are none. */
export function median(xs: readonly number[]): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((x, y) => x - y);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : Math.round(((s[mid - 1]! + s[mid]!) / 2) * 100) / 100;
}

export interface RatioSummary {
  /** each round's ratio, in round order (null where that round had none) */
  rounds: Array<number | null>;
  median: number | null;
  min: number | null;
  max: number | null;
}

/** Per metric: every round's gateway/bare ratio, their median and range (rounds without a ratio are skipped). */
export function summariseRatios(rounds: ReadonlyArray<Record<string, number | null> | null>): Record<string, RatioSummary> {
  const metrics = [...new Set(rounds.flatMap((r) => (r ? Object.keys(r) : [])))];
  return Object.fromEntries(
    metrics.map((m) => {
      const values = rounds.map((r) => r?.[m] ?? null);
      const present = values.filter((v): v is number => v !== null);
      return [m, { rounds: values, median: median(present), min: present.length ? Math.min(...present) : null, max: present.length ? Math.max(...present) : null }];
    }),
  );
}
