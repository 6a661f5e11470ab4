// ARCHITECTURE "Rules in one place": no folder of src/domain imports another in a circle. The energy rules
// (ere: what counts; energy: the monthly rows; charging: sessions and readings) are layered charging → ere,
// energy → charging and ere; charging → chargers; the calendar and the e-mail rule live in src/lib. This reads the
// relative imports of every domain file.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve('src/domain');

function folderGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith('.ts')) {
        const from = path.relative(ROOT, p).split(path.sep)[0]!;
        for (const m of fs.readFileSync(p, 'utf8').matchAll(/from\s+'(\.[^']+)'/g)) {
          const rel = path.relative(ROOT, path.resolve(path.dirname(p), m[1]!));
          const parts = rel.split(path.sep);
          if (rel.startsWith('..') || parts.length < 2 || parts[0] === from) continue;
          graph.set(from, (graph.get(from) ?? new Set()).add(parts[0]!));
        }
      }
    }
  };
  walk(ROOT);
  return graph;
}

/** The folders a folder reaches through imports. */
function reach(graph: Map<string, Set<string>>, start: string): Set<string> {
  const seen = new Set<string>();
  const todo = [...(graph.get(start) ?? [])];
  while (todo.length) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    todo.push(...(graph.get(f) ?? []));
  }
  return seen;
}

describe('src/domain folders', () => {
  it('no folder imports a folder that imports it back', () => {
    const graph = folderGraph();
    // registry before runtime: charging (sessions, live state) reads chargers (id tokens, live view), never back;
    // invites and partners share the e-mail rule through src/lib
    for (const f of graph.keys()) {
      const circle = [...reach(graph, f)].filter((g) => g !== f && reach(graph, g).has(f));
      expect(circle, `${f} is in a circle with`).toEqual([]);
    }
  });
});
