// How deep a parsed JSON value nests, found without recursion: a hostile frame can nest 10,000 levels, and
// JSON.stringify (or PostgreSQL's jsonb) would overflow its stack on it.

/** true when `value` nests deeper than `limit` levels (an object or array is one level). */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > limit) return true;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return false;
}
