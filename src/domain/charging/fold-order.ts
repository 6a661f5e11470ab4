// The order in which a session's register readings are folded (readings.ts foldSteps): the values of one instant
// (D259, D268) and the readings out of the session's time (D260). Generic over the point type, so the session's fold
// (session-energy.ts) and the months' points (register-points.ts) put them in the same order.

/**
 * D268: the values a charger reports for one instant, from points in time order. A register has one value at an
 * instant: the instant's value is the one that continues the register from the instant before (not below it, then
 * the nearest; with none before, the lowest; a session's start value, `first`, always), folded first, then the
 * instant's other values, lowest first. The fold (session-energy.ts) judges each other value from the instant's value
 * as a step in no time (stepOf, over one second): within it (a meterStop a few Wh above the last sample of its second,
 * D107) it is an ordinary point; beyond it (meterStop beside a transactionData copy 200 Wh apart, a meterStop of 0
 * for "not known", a hostile value) it is a conflict, a doubtful value of its own (`register_conflict`), no base
 * until accepted (D176) and holding what it adds (D258). So neither the order of the values nor a hostile one moves
 * the base of the next step (D259 folded the lower first, which made a meterStop of 0 the base of the register's
 * whole rise). Returns each point with its instant's value.
 */
export function instantValues<T>(points: T[], atOf: (p: T) => number, whOf: (p: T) => bigint, before: bigint | null, first: (p: T) => boolean = () => false): Array<{ p: T; value: T }> {
  const out: Array<{ p: T; value: T }> = [];
  let last = before;
  for (let i = 0; i < points.length; ) {
    let j = i + 1;
    while (j < points.length && atOf(points[j]!) === atOf(points[i]!)) j++;
    const group = points.slice(i, j);
    let k = group.findIndex(first);
    if (k === -1) {
      k = 0;
      for (let m = 1; m < group.length; m++) if (continuesBetter(whOf(group[m]!), whOf(group[k]!), last)) k = m;
    }
    const value = group[k]!;
    out.push({ p: value, value });
    const rest = group.filter((_, m) => m !== k).sort((a, b) => (whOf(a) < whOf(b) ? -1 : whOf(a) > whOf(b) ? 1 : 0));
    for (const p of rest) out.push({ p, value });
    last = whOf(value);
    i = j;
  }
  return out;
}

/** whether register value `a` continues from `base` better than `b` (not below it, then nearer; no base: lower) */
function continuesBetter(a: bigint, b: bigint, base: bigint | null): boolean {
  if (base === null) return a < b;
  if (a >= base !== b >= base) return a >= base;
  const d = (x: bigint) => (x >= base ? x - base : base - x);
  return d(a) < d(b) || (d(a) === d(b) && a < b);
}

/**
 * D260: the order in which a session's register points are folded, from its points in time order (D259: readings of
 * one instant lower value first) and its start (started_at, ms). A point stamped before the start whose register is
 * above the session's first point at or after the start was not taken before the start (registers do not run
 * backwards: a clock that fell back mid-session): it is no point of the session's time line. Such points are folded
 * after all the others, in their own order, at the time of the last point before them, each a doubtful value
 * (`before_session_start`): no base until accepted, its Wh held (what it shows above the last trusted register) until
 * an operator decides. A point before the start that is not above it (a value sampled just before the start event)
 * stays in its place. Returns the points in fold order, each with whether it was moved and the time it is folded at.
 * The gateway's fold (session-energy.ts) and the counting's points (register-points.ts) both order by this.
 */
export function foldOrder<T>(points: T[], atOf: (p: T) => number, whOf: (p: T) => bigint, startMs: number): Array<{ p: T; moved: boolean; at: number }> {
  const first = points.find((p) => atOf(p) >= startMs);
  if (first === undefined) return points.map((p) => ({ p, moved: false, at: atOf(p) }));
  const startWh = whOf(first);
  const inPlace: Array<{ p: T; moved: boolean; at: number }> = [];
  const moved: T[] = [];
  for (const p of points) {
    if (atOf(p) < startMs && whOf(p) > startWh) moved.push(p);
    else inPlace.push({ p, moved: false, at: atOf(p) });
  }
  if (moved.length === 0) return inPlace;
  const lastAt = inPlace[inPlace.length - 1]!.at;
  return [...inPlace, ...moved.map((p) => ({ p, moved: true, at: lastAt }))];
}
