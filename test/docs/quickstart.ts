// Reads the quick-start of README.md: the marker convention is written there.
//   <!-- quickstart:start -->   before the sh block that starts the service: `[VAR=value …] npm start`
//   <!-- quickstart -->         before an sh block the test runs (in order, in one bash session)
//   <!-- quickstart:expect -->  before a json block: the answer the preceding run block prints last
// In an expected answer a string "<…>" matches any value, a string ending in "…" any string with that start;
// object keys left out are not compared; arrays must have the same length.

export interface QuickstartBlock {
  script: string;
  expect?: string;
}

export interface Quickstart {
  start: { command: string; env: Record<string, string> };
  blocks: QuickstartBlock[];
}

/** The fenced block of the given language that starts on the first non-blank line after `from`. */
function fenceAfter(lines: string[], from: number, lang: string): { body: string; end: number } {
  let i = from;
  while (i < lines.length && lines[i]!.trim() === '') i++;
  if (lines[i]?.trim() !== '```' + lang) throw new Error(`line ${i + 1}: expected a \`\`\`${lang} block after the marker`);
  const body: string[] = [];
  for (i++; i < lines.length && lines[i]!.trim() !== '```'; i++) body.push(lines[i]!);
  if (i >= lines.length) throw new Error(`unclosed \`\`\`${lang} block`);
  return { body: body.join('\n'), end: i };
}

export function parseQuickstart(markdown: string): Quickstart {
  const lines = markdown.split('\n');
  let start: Quickstart['start'] | undefined;
  const blocks: QuickstartBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = /^<!-- quickstart(:start|:expect)? -->$/.exec(lines[i]!.trim());
    if (!marker) continue;
    if (marker[1] === ':start') {
      const { body, end } = fenceAfter(lines, i + 1, 'sh');
      const m = /^((?:[A-Z_][A-Z0-9_]*=\S+\s+)*)(npm start)\s*$/.exec(body.trim());
      if (!m) throw new Error(`the start block must be "[VAR=value …] npm start", not: ${body}`);
      const env: Record<string, string> = {};
      for (const a of m[1]!.trim().split(/\s+/).filter(Boolean)) {
        const [k, v] = a.split(/=(.*)/s, 2) as [string, string];
        env[k] = v;
      }
      start = { command: m[2]!, env };
      i = end;
    } else if (marker[1] === ':expect') {
      const { body, end } = fenceAfter(lines, i + 1, 'json');
      const last = blocks.at(-1);
      if (!last || last.expect !== undefined) throw new Error(`line ${i + 1}: an expected answer without its own quickstart block`);
      last.expect = body;
      i = end;
    } else {
      const { body, end } = fenceAfter(lines, i + 1, 'sh');
      blocks.push({ script: body });
      i = end;
    }
  }
  if (!start) throw new Error('README.md has no <!-- quickstart:start --> block');
  return { start, blocks };
}

/** Where `actual` differs from `expected` (empty when it matches). */
export function matchExpected(expected: unknown, actual: unknown, at = '$'): string[] {
  if (typeof expected === 'string' && /^<.*>$/s.test(expected)) return actual === undefined ? [`${at}: missing`] : [];
  if (typeof expected === 'string' && expected.endsWith('…')) {
    const prefix = expected.slice(0, -1);
    return typeof actual === 'string' && actual.startsWith(prefix) ? [] : [`${at}: ${JSON.stringify(actual)} does not start with ${JSON.stringify(prefix)}`];
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return [`${at}: expected an array, got ${JSON.stringify(actual)}`];
    if (actual.length !== expected.length) return [`${at}: expected ${expected.length} items, got ${actual.length}`];
    return expected.flatMap((e, i) => matchExpected(e, actual[i], `${at}[${i}]`));
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${at}: expected an object, got ${JSON.stringify(actual)}`];
    return Object.entries(expected).flatMap(([k, e]) => matchExpected(e, (actual as Record<string, unknown>)[k], `${at}.${k}`));
  }
  return Object.is(expected, actual) ? [] : [`${at}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`];
}
