/** A clock tests move by hand (token expiry, mandate link expiry, month boundaries). */
export interface TestClock {
  (): Date;
  set(d: Date | string): void;
  advance(ms: number): void;
}

export function testClock(start: Date | string = '2026-11-22T10:00:00Z'): TestClock {
  let now = new Date(start).getTime();
  const clock = (() => new Date(now)) as TestClock;
  clock.set = (d) => {
    now = new Date(d).getTime();
  };
  clock.advance = (ms) => {
    now += ms;
  };
  return clock;
}
