// D70: the gateway runs with a larger young generation (--max-semi-space-size), wherever it is started: npm start,
// the built service and the container run node with the same flags, and the benchmarks start it with them too
// (bench/start-flags.ts reads them from the start script).
import fs from 'node:fs';
import { expect, it } from 'vitest';
import { startNodeFlags } from '../../bench/start-flags.ts';

/** the node flags of a command line: the words between `node` and the script, --import and its module left out */
function flagsOf(command: string): string[] {
  const words = command.trim().split(/\s+/);
  const at = words.indexOf('node');
  const flags: string[] = [];
  for (let i = at + 1; i < words.length && words[i]!.startsWith('--'); i++) {
    if (words[i] === '--import') i++;
    else flags.push(words[i]!);
  }
  return flags;
}

it('npm start, the built service and the container run node with the same flags', () => {
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  const start = startNodeFlags();
  expect(start).toContain('--max-semi-space-size=64');
  expect(flagsOf(pkg.scripts['start:dist']!)).toEqual(start);
  const cmd = /^CMD .*exec (node [^"]*)"\]$/m.exec(fs.readFileSync('Dockerfile', 'utf8'));
  expect(cmd).not.toBeNull();
  expect(flagsOf(cmd![1]!)).toEqual(start);
});
