// U+0000 in input: PostgreSQL's text cannot hold it (and jsonb refuses its escape), and text that is not UTF-8 (D112),
// so every input that reaches a statement is checked for both, by one rule (textFault): src/http/no-nul.ts for request
// schemas, the partner rows' own validation, and the references of sessions:batch items.

/** The path of the first string or object key in `v` with a text fault (textFaultAt), or null. */
export function textFaultPath(v: unknown, skip: ReadonlyArray<readonly PropertyKey[]> = []): PropertyKey[] | null {
  return textFaultAt(v, skip)?.path ?? null;
}

export const NUL_MESSAGE = 'must not contain a NUL character (U+0000)';
export const ENCODING_MESSAGE = 'must be UTF-8 text (a byte that is not UTF-8 arrives as U+FFFD, a lone surrogate cannot be stored)';

/**
 * What is wrong with a text as input (D112): U+0000, which PostgreSQL's text cannot hold; U+FFFD, which is what the
 * body parser makes of bytes that are not UTF-8 (two different names sent in Latin-1 would arrive as one); or an
 * unpaired surrogate (an escape such as \ud800), which becomes U+FFFD on its way to the database. Null when none.
 */
export function textFault(s: string): string | null {
  if (s.includes('\u0000')) return NUL_MESSAGE;
  return /[\uD800-\uDFFF\uFFFD]/u.test(s) ? ENCODING_MESSAGE : null;
}

/**
 * The first string or object key in `v` with a text fault (textFault), its path and the fault; null when none. Walked
 * with a stack of its own, not by recursion: a body may nest as deep as its size allows (a fuzz case nested 100,000
 * objects), and each entry knows only its parent, so the path is built once, for a hit. The values at the paths in
 * `skip` are not looked into.
 */
export function textFaultAt(v: unknown, skip: ReadonlyArray<readonly PropertyKey[]> = []): { path: PropertyKey[]; message: string } | null {
  interface Entry {
    v: unknown;
    key: PropertyKey | undefined;
    up: Entry | undefined;
    depth: number;
  }
  const skipDepth = Math.max(0, ...skip.map((p) => p.length));
  const skipped = (e: Entry): boolean => {
    if (e.depth > skipDepth) return false;
    const at = pathOf(e);
    return skip.some((p) => p.length === at.length && p.every((k, i) => k === at[i]));
  };
  const pathOf = (e: Entry | undefined, last?: PropertyKey): PropertyKey[] => {
    const path: PropertyKey[] = last === undefined ? [] : [last];
    for (let at = e; at?.up; at = at.up) path.push(at.key!);
    return path.reverse();
  };
  const stack: Entry[] = [{ v, key: undefined, up: undefined, depth: 0 }];
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (skip.length > 0 && skipped(e)) continue;
    const x = e.v;
    if (typeof x === 'string') {
      const fault = textFault(x);
      if (fault) return { path: pathOf(e), message: fault };
    } else if (Array.isArray(x)) {
      for (let i = x.length - 1; i >= 0; i--) stack.push({ v: x[i], key: i, up: e, depth: e.depth + 1 });
    } else if (x !== null && typeof x === 'object' && !(x instanceof Date)) {
      const entries = Object.entries(x);
      for (const [k] of entries) {
        const fault = textFault(k);
        if (fault) return { path: pathOf(e, k), message: fault };
      }
      for (let i = entries.length - 1; i >= 0; i--) stack.push({ v: entries[i]![1], key: entries[i]![0], up: e, depth: e.depth + 1 });
    }
  }
  return null;
}

/**
 * The first `max` UTF-16 units of `s`, never half a character: a cut that would end on the first half of a
 * surrogate pair (an emoji, most symbols outside the Basic Multilingual Plane) ends before it (D159). `.slice(0, n)`
 * left a lone surrogate, which JSON encoders write as an escape strict parsers refuse and PostgreSQL stores as U+FFFD.
 */
export function cutText(s: string, max: number): string {
  if (s.length <= max) return s;
  const code = s.charCodeAt(max - 1);
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}
