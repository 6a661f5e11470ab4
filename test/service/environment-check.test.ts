// D186 (C0.1): sandbox and production never share a database. The first start records the database's environment;
// a process of the other environment refuses to start with one line naming APP_ENV (exit 1), so a sandbox process
// cannot sign mandates through /sandbox on a production database, and production never sees the sandbox's demo
// credentials.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { startService } from '../../src/main.ts';
import { createLogger } from '../../src/logger.ts';
import { StartFailure } from '../../src/lib/start-failure.ts';
import { createTestDb } from '../helpers/db.ts';
import { testConfig } from '../helpers/app.ts';
import { startServiceProcess } from '../helpers/service-process.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const base = { JOBS_ENABLED: 'false', LOG_LEVEL: 'warn' };
const tmp = tempDirs('ere-envcheck-');
const PRODUCTION_OPERATOR = {
  OPERATOR_NAME: 'Laadstroom B.V.',
  OPERATOR_ADDRESS: 'Stationsplein 1, 3511 ED Utrecht',
  OPERATOR_KVK: '87654321',
  OPERATOR_SUPPORT_EMAIL: 'support@laadstroom.example',
  OPERATOR_PRIVACY_URL: 'https://laadstroom.example/privacy',
};

describe('D186: one environment per database', () => {
  it('a production process on a sandbox-seeded data dir is refused naming APP_ENV, in one line', { timeout: 180_000 }, async () => {
    const dataDir = tmp();
    const sandbox = await startServiceProcess({ ...base, DATA_DIR: dataDir });
    expect(await sandbox.kill('SIGTERM')).toBe(0);
    const key = fs.readFileSync(path.join(dataDir, 'data-encryption.key'), 'utf8').trim();
    const r = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...base, ...PRODUCTION_OPERATOR, APP_ENV: 'production', DATA_DIR: dataDir, DATA_ENCRYPTION_KEY: key },
      timeout: 90_000,
    }).then(
      (x) => ({ code: 0, out: x.stdout + x.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
    );
    expect(r.code, r.out).toBe(1);
    expect(r.out.trim()).toBe(
      'ere-gateway cannot start: APP_ENV: this database belongs to sandbox and this process is production; sandbox and ' +
        'production never share a database (C0.1): give the production process its own database (DATABASE_URL, or DATA_DIR for PGlite)',
    );
  });

  it('a sandbox app on a production database is refused before it seeds; the production app starts again', async () => {
    const db = await createTestDb();
    const logger = createLogger({ level: 'silent' });
    const keep = { ...db, close: async () => {} };
    const prod = await startService({ config: testConfig({ APP_ENV: 'production', ...PRODUCTION_OPERATOR }), logger, listen: false, dbHandle: keep, seed: false });
    await prod.stop();
    const err = await startService({ config: testConfig({ APP_ENV: 'sandbox' }), logger, listen: false, dbHandle: keep, seed: true }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StartFailure);
    expect((err as StartFailure).key).toBe('APP_ENV');
    expect((err as Error).message).toContain('this database belongs to production and this process is sandbox');
    // nothing was seeded: the demo partner and its client do not exist on the production database
    expect(await db.db.selectFrom('partners').select('id').execute()).toEqual([]);
    const again = await startService({ config: testConfig({ APP_ENV: 'production', ...PRODUCTION_OPERATOR }), logger, listen: false, dbHandle: keep });
    await again.stop();
    await db.close();
  });
});
