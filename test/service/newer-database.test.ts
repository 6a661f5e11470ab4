// D188: a database migrated by a newer release (a migration this release does not have) stops the start and
// `npm run migrate` with one line saying so and naming the migration; kysely's "corrupted migrations" came as an
// 11-line stack, and npm run migrate blamed DATABASE_URL.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createTestDb } from '../helpers/db.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';
import { nodeArgs } from '../helpers/service-process.ts';

const tmp = tempDirs('ere-newerdb-');

async function run(script: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  return promisify(execFile)(process.execPath, nodeArgs(script), {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', JOBS_ENABLED: 'false', ...env },
    timeout: 120_000,
  }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
  );
}

describe('D188: a database migrated by a newer release', () => {
  it('the start and npm run migrate each say so in one line naming the migration, exit 1', { timeout: 240_000 }, async () => {
    let env: Record<string, string>;
    let key: string;
    if (process.env.DATABASE_URL) {
      const db = await createTestDb();
      await sql`insert into kysely_migration values ('9999_future', now())`.execute(db.db);
      await db.close();
      env = { DATABASE_URL: db.url!, DATA_DIR: tmp() };
      key = 'DATABASE_URL';
    } else {
      const dir = path.join(tmp(), 'data');
      const h = await createDb({ DATA_DIR: dir });
      await migrate(h.db);
      await sql`insert into kysely_migration values ('9999_future', now())`.execute(h.db);
      await h.close();
      env = { DATA_DIR: dir };
      key = 'DATA_DIR';
    }
    const line =
      `ere-gateway cannot start: ${key}: the database was migrated by a newer release of ere-gateway (migration ` +
      '9999_future, which this release does not have); this release cannot run on it: run that release or a later one';
    for (const script of ['src/db/migrate-cli.ts', 'src/main.ts']) {
      const r = await run(script, env);
      expect(r.code, r.out).toBe(1);
      expect(r.out.trim(), script).toBe(line);
    }
  });
});
