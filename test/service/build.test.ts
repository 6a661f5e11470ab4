// issue 13 item 6: `npm run build` (scripts/build.mjs) compiles src and schemas to plain JavaScript that runs with
// `node` and no TypeScript loader, finding its migrations and bundled catalog from the build output. Built into a
// temporary directory (the repository's dist/ is left alone); node_modules is linked beside it, as the Dockerfile
// puts it beside /app/dist. Then the Dockerfile's two steps on embedded PGlite: the service answers /readyz 200 and
// stops on SIGTERM, and the migrate command finds the data dir up to date.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';

const root = path.resolve(import.meta.dirname, '../..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-build-'));
const outDir = path.join(work, 'dist');
const dataDir = path.join(work, 'data');
let running: ServiceProcess | undefined;

// no NODE_OPTIONS and no --import: a stray `.ts` import or a loader would fail here
const env: Record<string, string> = {
  PATH: process.env.PATH ?? '',
  DATA_DIR: dataDir,
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
  JOBS_ENABLED: 'false',
};

afterAll(() => {
  void running?.kill();
  fs.rmSync(work, { recursive: true, force: true });
});

function jsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.js'))
    .map((e) => path.join(e.parentPath, e.name));
}

describe('npm run build', () => {
  it('emits JavaScript with .js imports, the migrations and the catalog; node runs it on PGlite', async () => {
    // --no-check: the emit without the type check (CI runs tsc --noEmit before the suite; the check took two thirds
    // of this test's time)
    const build = spawnSync(process.execPath, ['scripts/build.mjs', '--out-dir', outDir, '--no-check'], { cwd: root, encoding: 'utf8' });
    expect(build.status, build.stdout + build.stderr).toBe(0);

    for (const file of ['src/main.js', 'src/db/migrate-cli.js', 'src/cli/admin.js', 'schemas/catalog/mid-chargers.json', 'package.json']) {
      expect(fs.existsSync(path.join(outDir, file)), file).toBe(true);
    }
    const sql = (dir: string) => fs.readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
    expect(sql(path.join(outDir, 'migrations'))).toEqual(sql(path.join(root, 'migrations')));
    // rewriteRelativeImportExtensions: no relative specifier still ends in .ts
    const tsImport = /(?:from|import)\s*\(?\s*['"]\.{1,2}\/[^'"]*\.ts['"]/;
    const offenders = jsFiles(path.join(outDir, 'src')).filter((f) => tsImport.test(fs.readFileSync(f, 'utf8')));
    expect(offenders).toEqual([]);

    fs.symlinkSync(path.join(root, 'node_modules'), path.join(work, 'node_modules'), 'dir');

    // the service (it migrates the fresh data dir itself)
    const service = (running = await startServiceProcess(env, 90_000, { args: [path.join(outDir, 'src/main.js')], cwd: work }));
    const url = service.url;
    const ready = await fetch(`${url}/readyz`);
    const out = service.output();
    expect(ready.status, out).toBe(200);
    // the bundled MID catalog was found from dist (src/domain/catalog/load.ts, first start)
    const loaded = /"models":(\d+)[^\n]*loaded the bundled MID catalog/.exec(out);
    expect(Number(loaded?.[1]), out).toBeGreaterThan(0);
    expect(await service.kill('SIGTERM')).toBe(0);

    // the Dockerfile's migrate step from dist (after the service, so PGlite's initdb runs once)
    const migrate = spawnSync(process.execPath, [path.join(outDir, 'src/db/migrate-cli.js')], { cwd: work, env, encoding: 'utf8' });
    expect(migrate.status, migrate.stdout + migrate.stderr).toBe(0);
    expect(migrate.stdout).toContain('database is up to date');
  }, 150_000);
});
