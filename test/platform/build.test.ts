// issue 13 item 6: `npm run build` (scripts/build.mjs) compiles src and schemas to plain JavaScript that runs with
// `node` and no TypeScript loader, finding its migrations and bundled catalog from the build output. Built into a
// temporary directory (the repository's dist/ is left alone); node_modules is linked beside it, as the Dockerfile
// puts it beside /app/dist. Then the Dockerfile's two steps on embedded PGlite: the service answers /readyz 200 and
// stops on SIGTERM, and the migrate command finds the data dir up to date.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-build-'));
const outDir = path.join(work, 'dist');
const dataDir = path.join(work, 'data');
const children: ChildProcess[] = [];

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
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  fs.rmSync(work, { recursive: true, force: true });
});

function jsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.js'))
    .map((e) => path.join(e.parentPath, e.name));
}

describe('npm run build', () => {
  it('emits JavaScript with .js imports, the migrations and the catalog; node runs it on PGlite', async () => {
    const build = spawnSync(process.execPath, ['scripts/build.mjs', '--out-dir', outDir], { cwd: root, encoding: 'utf8' });
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
    const child = spawn(process.execPath, [path.join(outDir, 'src/main.js')], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (b: Buffer) => {
        out += b.toString();
        const m = /API:\s+(http:\/\/\S+)/.exec(out);
        if (m && /OCPP:/.test(out)) resolve(m[1]!);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', (b: Buffer) => (out += b.toString()));
      child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
    });
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status, out).toBe(200);
    // the bundled MID catalog was found from dist (src/domain/catalog/load.ts, first start)
    const loaded = /"models":(\d+)[^\n]*loaded the bundled MID catalog/.exec(out);
    expect(Number(loaded?.[1]), out).toBeGreaterThan(0);
    const closed = new Promise<number | string | null>((r) => child.on('close', (code, signal) => r(code ?? signal)));
    child.kill('SIGTERM');
    expect(await closed).toBe(0);

    // the Dockerfile's migrate step from dist (after the service, so PGlite's initdb runs once)
    const migrate = spawnSync(process.execPath, [path.join(outDir, 'src/db/migrate-cli.js')], { cwd: work, env, encoding: 'utf8' });
    expect(migrate.status, migrate.stdout + migrate.stderr).toBe(0);
    expect(migrate.stdout).toContain('database is up to date');
  }, 150_000);
});
