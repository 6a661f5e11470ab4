// The node/V8 flags `npm start` runs the gateway with (package.json's start script), so a benchmark that starts
// the gateway itself measures what is deployed (D70: the young generation's size).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The flags between `node` and the script in the start script, --import and its module left out. */
export function startNodeFlags(): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const words = pkg.scripts.start!.trim().split(/\s+/);
  if (words[0] !== 'node') throw new Error(`the start script does not run node: ${pkg.scripts.start}`);
  const flags: string[] = [];
  for (let i = 1; i < words.length && words[i]!.startsWith('--'); i++) {
    if (words[i] === '--import') i++;
    else flags.push(words[i]!);
  }
  return flags;
}
