// D70, D73: the gateway runs with a larger young generation (--max-semi-space-size) and its garbage collected on its
// own thread (--single-threaded-gc), wherever it is started: npm start,
// the built service and the container run node with the same flags, and the benchmarks start it with them too
// (bench/start-flags.ts reads them from the start script).
import fs from 'node:fs';
import { expect, it } from 'vitest';
import { nodeFlagsOf, startNodeFlags } from '../../bench/start-flags.ts';

it('npm start, the built service and the container run node with the same flags', () => {
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  const start = startNodeFlags();
  expect(start).toContain('--max-semi-space-size=64');
  expect(start).toContain('--single-threaded-gc'); // D73
  expect(nodeFlagsOf(pkg.scripts['start:dist']!)).toEqual(start);
  const cmd = /^CMD .*exec (node [^"]*)"\]$/m.exec(fs.readFileSync('Dockerfile', 'utf8'));
  expect(cmd).not.toBeNull();
  expect(nodeFlagsOf(cmd![1]!)).toEqual(start);
});
