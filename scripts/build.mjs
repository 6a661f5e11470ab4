// npm run build: compile src and schemas with tsc (tsconfig.build.json) into dist/, then put the files the
// service reads at run time beside the compiled code, at the same place relative to it as in the repository:
// migrations/*.sql (src/db/migrate.ts) and schemas/catalog/*.json (src/domain/catalog/load.ts). dist/ then
// runs with plain node and no TypeScript loader: `node dist/src/main.js`, `node dist/src/db/migrate-cli.js`.
// Plain JavaScript on purpose: it runs before anything is compiled.
//   node scripts/build.mjs [--out-dir DIR] [--no-check]
// (default dist; the build test builds into a temporary directory, and with --no-check: tsc emits without
// type-checking, the same files, in a third of the time; CI and `npx tsc --noEmit` check the types)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const at = process.argv.indexOf('--out-dir');
const outDir = path.resolve(at > 0 && process.argv[at + 1] ? process.argv[at + 1] : path.join(root, 'dist'));

fs.rmSync(outDir, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const noCheck = process.argv.includes('--no-check') ? ['--noCheck'] : [];
const run = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json'), '--outDir', outDir, ...noCheck], {
  stdio: 'inherit',
});
if (run.status !== 0) {
  console.error(`build: tsc failed (exit ${run.status ?? run.signal}); nothing usable in ${outDir}`);
  process.exit(run.status || 1);
}

// the runtime files, read through paths relative to the compiled module (import.meta.url)
const assets = [
  { from: 'migrations', match: /\.sql$/ },
  { from: 'schemas/catalog', match: /\.json$/ },
];
for (const { from, match } of assets) {
  const dest = path.join(outDir, from);
  fs.mkdirSync(dest, { recursive: true });
  for (const file of fs.readdirSync(path.join(root, from))) {
    if (match.test(file)) fs.copyFileSync(path.join(root, from, file), path.join(dest, file));
  }
}
// dist/ is ES modules wherever it is put (a directory without the project's package.json above it)
fs.writeFileSync(path.join(outDir, 'package.json'), JSON.stringify({ type: 'module', private: true }, null, 2) + '\n');
const shown = path.relative(root, outDir).startsWith('..') ? outDir : path.relative(root, outDir);
console.log(`build: ${shown}/ is ready: node ${path.join(shown, 'src/main.js')}`);
