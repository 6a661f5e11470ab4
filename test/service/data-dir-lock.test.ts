// D150: embedded PGlite is one process per data dir. A second process on a DATA_DIR a live process holds refuses
// to start (one line naming DATA_DIR, exit 1) and leaves the first alone; a holder killed with SIGKILL leaves no
// lock behind (the kernel closes its socket), so a restart works at once.
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { lockDataDir, lockSocketPath } from '../../src/db/data-dir-lock.ts';
import { startServiceProcess, type ServiceProcess, nodeArgs } from '../helpers/service-process.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const baseEnv = (dataDir: string) => ({ DATA_DIR: dataDir, JOBS_ENABLED: 'false', LOG_LEVEL: 'warn' });

/** a process of the service that is expected to refuse: its exit code and output */
async function refused(script: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  return promisify(execFile)(process.execPath, nodeArgs(script), {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...env },
    timeout: 60_000,
  }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
  );
}

const lockDirs = tempDirs('ere-lock-');
const longDirs = tempDirs('ere-lock-long-');
const running: ServiceProcess[] = [];
afterAll(async () => {
  await Promise.all(running.map((p) => p.kill()));
});

describe('D150: one process per PGlite data dir', () => {
  it('a second service and npm run migrate are refused while the first runs; the first keeps serving; kill -9 frees the dir at once', { timeout: 240_000 }, async () => {
    const dataDir = lockDirs();
    const first = await startServiceProcess(baseEnv(dataDir));
    running.push(first);

    for (const script of ['src/main.ts', 'src/db/migrate-cli.ts']) {
      const second = await refused(script, { ...baseEnv(dataDir), DATABASE_URL: '' });
      expect(second.code, second.out).toBe(1);
      expect(second.out).toContain(`cannot start: DATA_DIR: ${path.resolve(dataDir)} is in use by another running ere-gateway process`);
      expect(second.out).not.toMatch(/^\s+at /m);
      expect(second.out).not.toContain('API:'); // it never listened
    }
    expect(first.alive()).toBe(true);
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);

    // the holder dies without a chance to clean up: the next start takes the dir at once
    expect(await first.kill('SIGKILL')).toBe('SIGKILL');
    const again = await startServiceProcess(baseEnv(dataDir));
    running.push(again);
    expect((await fetch(`${again.url}/readyz`)).status).toBe(200);
    expect(await again.kill('SIGTERM')).toBe(0);
  });

  it('a data dir whose path is too long for a socket is locked under the temp dir; a dead holder is no holder', { timeout: 60_000 }, async () => {
    const deep = path.join(longDirs(), 'd'.repeat(60), 'e'.repeat(60));
    fs.mkdirSync(deep, { recursive: true });
    const file = lockSocketPath(fs.realpathSync(deep));
    expect(path.dirname(file)).toBe(os.tmpdir());

    // a holder in another process, killed outright: its socket file stays, and nobody answers on it
    const holder = spawn(process.execPath, ['--import', 'tsx', '-e', `import('./src/db/data-dir-lock.ts').then((m) => m.lockDataDir(${JSON.stringify(deep)})).then(() => { console.log('held'); setInterval(() => {}, 1000); })`], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => holder.stdout!.on('data', (b: Buffer) => b.toString().includes('held') && resolve()));
    await expect(lockDataDir(deep)).rejects.toThrow(/DATA_DIR: .* is in use by another running ere-gateway process/);
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.on('close', resolve));
    expect(fs.existsSync(file)).toBe(true);

    const lock = await lockDataDir(deep);
    await expect(lockDataDir(deep)).rejects.toThrow(/in use/); // held by this process now
    await lock.release();
    await (await lockDataDir(deep)).release();
  });
});
