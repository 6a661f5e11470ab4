// A small seeded PRNG (mulberry32) for the fuzz test: the same seed gives the same cases, so a failure
// printed with its seed can be replayed with FUZZ_SEED=<seed>. No library: 30 lines are enough here.
export class Prng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  /** uniform in [0, 1) */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  /** integer in [min, max] */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
  /** a child generator with its own stream (one per lane, so lanes stay reproducible when run concurrently) */
  fork(salt: number): Prng {
    return new Prng((this.int(0, 0xffffffff) ^ Math.imul(salt + 1, 0x9e3779b1)) >>> 0);
  }
  /** a random string of the given length from the alphabet */
  str(len: number, alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'): string {
    let s = '';
    for (let i = 0; i < len; i++) s += alphabet[Math.floor(this.next() * alphabet.length)];
    return s;
  }
  bytes(len: number): Buffer {
    const b = Buffer.alloc(len);
    for (let i = 0; i < len; i++) b[i] = this.int(0, 255);
    return b;
  }
}

/** FUZZ_SEED (decimal) or a fresh one; FUZZ_CASES or the default. */
export function fuzzSettings(defaultCases: number): { seed: number; cases: number } {
  const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) >>> 0 : (Date.now() ^ (process.pid << 16)) >>> 0;
  const cases = process.env.FUZZ_CASES ? Math.max(1, Number(process.env.FUZZ_CASES) | 0) : defaultCases;
  return { seed, cases };
}
