// D186 (C0.1): sandbox and production never share a database. The first start records the database's environment;
// a process of the other environment refuses to start with one line naming APP_ENV (exit 1), so a sandbox process
// cannot sign mandates through /sandbox on a production database, and production never sees the sandbox's demo
// credentials.
import { describe, expect, it } from 'vitest';
import { startService } from '../../src/main.ts';
import { createLogger } from '../../src/logger.ts';
import { StartFailure } from '../../src/lib/start-failure.ts';
import { createTestDb } from '../helpers/db.ts';
import { testConfig } from '../helpers/app.ts';

const PRODUCTION_OPERATOR = {
  OPERATOR_NAME: 'Laadstroom B.V.',
  OPERATOR_ADDRESS: 'Stationsplein 1, 3511 ED Utrecht',
  OPERATOR_KVK: '87654321',
  OPERATOR_SUPPORT_EMAIL: 'support@laadstroom.example',
  OPERATOR_PRIVACY_URL: 'https://laadstroom.example/privacy',
};

describe('D186: one environment per database', () => {
  // in-process: the start failure's message is the one line the process prints before it exits 1 (the mechanism every
  // start failure goes through, test/service/start-failures.test.ts); spawning a sandbox and a production process on a
  // PGlite data dir took 21 s of the suite for the same verdict
  it('a production app on a sandbox-seeded database is refused naming APP_ENV; the demo credentials never meet production', async () => {
    const db = await createTestDb();
    const logger = createLogger({ level: 'silent' });
    const keep = { ...db, close: async () => {} };
    const sandbox = await startService({ config: testConfig({ APP_ENV: 'sandbox' }), logger, listen: false, dbHandle: keep, seed: true });
    await sandbox.stop();
    expect((await db.db.selectFrom('partners').select('id').execute()).length).toBeGreaterThan(0); // the demo partner
    const err = await startService({ config: testConfig({ APP_ENV: 'production', ...PRODUCTION_OPERATOR }), logger, listen: false, dbHandle: keep }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StartFailure);
    expect((err as StartFailure).key).toBe('APP_ENV');
    expect((err as Error).message).toBe(
      'ere-gateway cannot start: APP_ENV: this database belongs to sandbox and this process is production; sandbox and production never share a database (C0.1): give the production process its own database (DATABASE_URL, or DATA_DIR for PGlite)',
    );
    await db.close();
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
