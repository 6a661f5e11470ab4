// One field of a request replaced at a time: the paths of a value's fields, and a copy with one of them replaced.
export type FieldPath = Array<string | number>;

/**
 * The paths of a value's fields, objects and arrays included, at most `items` items of each array; with `root` the
 * value itself first (the empty path).
 */
export function fieldPaths(v: unknown, opts: { root: boolean; items: number }, at: FieldPath = []): FieldPath[] {
  const here = opts.root || at.length > 0 ? [at] : [];
  if (Array.isArray(v)) return [...here, ...v.slice(0, opts.items).flatMap((x, i) => fieldPaths(x, opts, [...at, i]))];
  if (v && typeof v === 'object') return [...here, ...Object.entries(v).flatMap(([k, x]) => fieldPaths(x, opts, [...at, k]))];
  return here;
}

/** A copy of `v` with the field at `at` set to `x` (the empty path: `x` itself). */
export function withField(v: unknown, at: FieldPath, x: unknown): unknown {
  if (at.length === 0) return x;
  const copy = structuredClone(v) as Record<string | number, unknown>;
  let o = copy;
  for (const k of at.slice(0, -1)) o = o[k] as Record<string | number, unknown>;
  o[at[at.length - 1]!] = x;
  return copy;
}
