// Nothing in the repository points outside it, and every code a reader meets can be looked up inside it:
// - no file mentions the build-time documents that do not ship (the contract file, the shared folder);
// - every relative Markdown link resolves to a file in the repository (and its #anchor to a heading there);
// - every decision code cited anywhere (C4.6) has its entry in docs/decisions.md;
// - every "spec §4.1" has its section in docs/api.md, every "TOOLCHAIN.md §3" in docs/toolchain.md, and
//   "ARCHITECTURE.md" is docs/architecture.md.
// Scans the repository's text files, except node_modules, dist, data, coverage and .git.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const SKIP_DIRS = new Set(['node_modules', 'dist', 'data', 'coverage', '.git']);
const TEXT = /\.(md|ts|mts|cts|js|mjs|cjs|json|sql|ya?ml|html|sh|toml|txt|csv)$|^(Dockerfile|\.env\.example|\.gitignore|\.dockerignore|run)$/;
const SELF = path.relative(root, import.meta.filename);

function textFiles(dir = root, out: string[] = []): string[] {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIP_DIRS.has(e.name)) textFiles(p, out);
    } else if (e.isFile() && TEXT.test(e.name) && e.name !== 'package-lock.json') {
      out.push(path.relative(root, p));
    }
  }
  return out;
}

const files = textFiles();
const read = (f: string) => fs.readFileSync(path.join(root, f), 'utf8');
const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const m = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const text = m[1]!.replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1');
    const slug = text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

describe('the repository stands alone', () => {
  it('scans the repository', () => {
    expect(files).toContain('README.md');
    expect(files).toContain('docs/decisions.md');
    expect(files.filter((f) => f.startsWith('src/')).length).toBeGreaterThan(50);
  });

  it('no file mentions a document that does not ship with the project', () => {
    const outside = /CONTRACT\.md|\bCONTRACT C\d|\.\.\/shared\b|\/work\/shared|service-interface\.md/g;
    const hits: string[] = [];
    for (const f of files) {
      if (f === SELF) continue;
      const text = read(f);
      for (const m of text.matchAll(outside)) hits.push(`${f}:${lineOf(text, m.index)}: ${m[0]}`);
    }
    expect(hits).toEqual([]);
  });

  it('every relative Markdown link resolves inside the repository', () => {
    const bad: string[] = [];
    const anchorCache = new Map<string, Set<string>>();
    const anchorsOf = (f: string) => {
      if (!anchorCache.has(f)) anchorCache.set(f, anchors(read(f)));
      return anchorCache.get(f)!;
    };
    for (const f of files.filter((x) => x.endsWith('.md'))) {
      const text = read(f);
      for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
        const target = m[1]!;
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
        const at = `${f}:${lineOf(text, m.index)}: ${target}`;
        const [p, anchor] = target.split('#', 2) as [string, string | undefined];
        const file = p === '' ? f : path.normalize(path.join(path.dirname(f), decodeURIComponent(p)));
        if (file.startsWith('..') || path.isAbsolute(file)) {
          bad.push(`${at} (outside the repository)`);
          continue;
        }
        if (!fs.existsSync(path.join(root, file))) {
          bad.push(`${at} (no such file)`);
          continue;
        }
        if (anchor && file.endsWith('.md') && !anchorsOf(file).has(anchor)) bad.push(`${at} (no such heading)`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('every decision code cited anywhere has its entry in docs/decisions.md', () => {
    const decisions = read('docs/decisions.md');
    const defined = new Set([...decisions.matchAll(/^\*\*(C\d\.\d+)\b/gm)].map((m) => m[1]!));
    // the whole range the code relies on is stated
    for (const c of ['C0.1', 'C1.1', 'C1.7', 'C2.8', 'C3.5', 'C4.12', 'C5.5', 'C6.8', 'C7.3']) expect(defined).toContain(c);
    const missing: string[] = [];
    for (const f of files) {
      if (f === SELF) continue;
      const text = read(f);
      for (const m of text.matchAll(/(?<![\w.])C(\d)\.(\d+)\b/g)) {
        if (!defined.has(m[0])) missing.push(`${f}:${lineOf(text, m.index)}: ${m[0]}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every section cited from the interface, the toolchain or the architecture notes exists in docs/', () => {
    const sections = (f: string) =>
      new Set([...read(f).matchAll(/^#{2,3} (\d+(?:\.\d+)?)\.? /gm)].map((m) => m[1]!));
    const api = sections('docs/api.md');
    const toolchain = sections('docs/toolchain.md');
    expect(fs.existsSync(path.join(root, 'docs/architecture.md'))).toBe(true);
    const missing: string[] = [];
    for (const f of files) {
      if (f === SELF) continue;
      const text = read(f);
      for (const m of text.matchAll(/\b(spec(?:ification)?(?:'s)?|TOOLCHAIN(?:\.md)?)\s+§\s?(\d+(?:\.\d+)?)/gi)) {
        const inApi = !/^toolchain/i.test(m[1]!);
        if (!(inApi ? api : toolchain).has(m[2]!)) missing.push(`${f}:${lineOf(text, m.index)}: ${m[0]} (${inApi ? 'docs/api.md' : 'docs/toolchain.md'})`);
      }
    }
    expect(missing).toEqual([]);
  });
});
