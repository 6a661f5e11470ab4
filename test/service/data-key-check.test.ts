// D153: every process on one database must hold the key its data was encrypted with. The first start records a
// check of its key in the database; a process with another key refuses to start (one line naming
// DATA_ENCRYPTION_KEY, exit 1) instead of answering 500 on every encrypted value.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createTestDb } from '../helpers/db.ts';
import { startServiceProcess, nodeArgs } from '../helpers/service-process.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const base = { JOBS_ENABLED: 'false', LOG_LEVEL: 'warn' };
const tmp = tempDirs('ere-keycheck-');

async function refused(env: Record<string, string>): Promise<{ code: number; out: string }> {
  return promisify(execFile)(process.execPath, nodeArgs('src/main.ts'), {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...base, ...env },
    timeout: 90_000,
  }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
  );
}

describe('D153: one data-encryption key per database', () => {
  it('a configured key other than the one the data was encrypted with is refused; the right one starts', { timeout: 180_000 }, async () => {
    const dataDir = tmp();
    const first = await startServiceProcess({ ...base, DATA_DIR: dataDir });
    expect(await first.kill('SIGTERM')).toBe(0);
    const generated = fs.readFileSync(path.join(dataDir, 'data-encryption.key'), 'utf8').trim();

    const other = crypto.randomBytes(32).toString('base64');
    const r = await refused({ DATA_DIR: dataDir, DATA_ENCRYPTION_KEY: other });
    expect(r.code, r.out).toBe(1);
    expect(r.out).toContain("cannot start: DATA_ENCRYPTION_KEY: the database's data is encrypted with another key");
    expect(r.out).not.toMatch(/^\s+at /m);
    expect(r.out).not.toContain(other); // the key itself is never printed

    const same = await startServiceProcess({ ...base, DATA_DIR: dataDir, DATA_ENCRYPTION_KEY: generated });
    expect((await fetch(`${same.url}/readyz`)).status).toBe(200);
    expect(await same.kill('SIGTERM')).toBe(0);
  });

  if (process.env.DATABASE_URL) {
    it('two sandbox processes on one database with their own DATA_DIRs: the second, with its own generated key, is refused', { timeout: 180_000 }, async () => {
      const db = await createTestDb();
      await db.close();
      const a = await startServiceProcess({ ...base, DATABASE_URL: db.url!, DATA_DIR: tmp() });
      try {
        const dirB = tmp();
        const r = await refused({ DATABASE_URL: db.url!, DATA_DIR: dirB });
        expect(r.code, r.out).toBe(1);
        expect(r.out).toContain('every process on one database needs the same DATA_ENCRYPTION_KEY (or the same DATA_DIR key file)');
        expect(r.out).toContain(path.join(dirB, 'data-encryption.key'));
        expect(a.alive()).toBe(true);
      } finally {
        await a.kill('SIGTERM');
      }
    });
  }
});
