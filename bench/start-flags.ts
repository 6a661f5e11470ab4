// The node/V8 flags `npm start` runs the gateway with (package.json's start script), so a benchmark that starts
// the gateway itself measures what is deployed (D70: the young generation's size).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The node flags of a command line: the words between `node` and the script, --import and its module left out. */
export function nodeFlagsOf(command: string): string[] {
  const words = command.trim().split(/\s+/);
  const at = words.indexOf('node');
  if (at < 0) throw new Error(`the command does not run node: ${command}`);
  const flags: string[] = [];
  for (let i = at + 1; i < words.length && words[i]!.startsWith('--'); i++) {
    if (words[i] === '--import') i++;
    else flags.push(words[i]!);
  }
  return flags;
}

/** The node flags of package.json's start script. */
export function startNodeFlags(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  return nodeFlagsOf(pkg.scripts.start!);
}
