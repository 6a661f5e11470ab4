// Test service: the real app on a fresh database (test/helpers/db.ts), built exactly as main.ts builds it.
// inject() for HTTP; listen: true for WebSocket (OCPP) and browser tests on port 0.
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { sql } from 'kysely';
import { loadConfig, type Config } from '../../src/config.ts';
import { startService, type Service } from '../../src/main.ts';
import { createLogger } from '../../src/logger.ts';
import { createTestDb, type TestDb } from './db.ts';
import type { TestClock } from './clock.ts';
import type { RouteRegistrar } from '../../src/http/types.ts';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';
export const TEST_ENCRYPTION_KEY = Buffer.alloc(32, 7).toString('base64');

export interface TestService extends Service {
  config: Config;
  testDb: TestDb;
  close(): Promise<void>;
}

/** D187: production refuses to start without the operator's identity (C7.3); tests of production get this one */
export const TEST_OPERATOR = {
  OPERATOR_NAME: 'Laadstroom B.V.',
  OPERATOR_ADDRESS: 'Stationsplein 1, 3511 ED Utrecht',
  OPERATOR_KVK: '87654321',
  OPERATOR_SUPPORT_EMAIL: 'support@laadstroom.example',
  OPERATOR_PRIVACY_URL: 'https://laadstroom.example/privacy',
};

export function testConfig(env: Record<string, string | undefined> = {}): Config {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-test-'));
  return loadConfig({
    APP_ENV: 'sandbox',
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATA_DIR: dataDir,
    DATA_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
    PORT: '0',
    HOST: '127.0.0.1',
    JOBS_ENABLED: 'false',
    // a charger answered one message at a time waits out the group-commit window after each (20 ms by default):
    // 2 ms still gathers what several chargers send at once, and took 37 s of worker time off test/ocpp and
    // test/simulator; the tests of batching itself set their own window
    INGEST_FLUSH_MS: '2',
    // High limits so no test trips C1.5 by accident; rate-limit tests set their own.
    RATE_LIMIT_CPO_PER_MIN: '100000',
    RATE_LIMIT_PARTNER_PER_MIN: '100000',
    RATE_LIMIT_PERSONAL_PER_MIN: '100000',
    RATE_LIMIT_TOKEN_PER_MIN: '100000',
    RATE_LIMIT_PUBLIC_PER_MIN: '100000',
    RATE_LIMIT_TOKEN_IP_PER_MIN: '100000',
    RATE_LIMIT_ADMIN_FAIL_PER_MIN: '100000',
    ...(env.APP_ENV === 'production' ? TEST_OPERATOR : {}),
    ...env,
  });
}

export interface TestServiceOptions {
  env?: Record<string, string | undefined>;
  clock?: TestClock | (() => Date);
  /** listen on 127.0.0.1:0 (needed for OCPP and browsers); default false (inject only) */
  listen?: boolean;
  /** seed the sandbox demo data (C1.7); default false */
  seed?: boolean;
  /** reuse a database (two app instances on one database); closing this service leaves it open */
  db?: TestDb;
  /** extra route files, registered after the service's own and before ready */
  extraRoutes?: RouteRegistrar[];
  /** load the bundled MID catalog (as startService does); default true */
  catalog?: boolean;
  /** start the scheduler (only with listen: true and JOBS_ENABLED); default false */
  jobs?: boolean;
  /** the pino logger to use (e.g. one writing into a test stream); default: silent unless TEST_LOG_LEVEL */
  logger?: import('pino').Logger;
}

export async function createTestService(opts: TestServiceOptions = {}): Promise<TestService> {
  const testDb = opts.db ?? (await createTestDb());
  const config = testConfig(opts.env);
  // D186: a database belongs to one environment (its first start records it); the tests that put a sandbox and a
  // production app on one database on purpose (to compare the two) forget the recorded one first
  if (opts.db) await sql`delete from database_environment`.execute(testDb.db);
  const service = await startService({
    config,
    logger: opts.logger ?? createLogger({ level: config.LOG_LEVEL }),
    listen: opts.listen ?? false,
    dbHandle: opts.db ? { ...testDb, close: async () => {} } : testDb,
    seed: opts.seed ?? false,
    jobs: opts.jobs ?? false,
    ...(opts.catalog !== undefined ? { catalog: opts.catalog } : {}),
    ...(opts.extraRoutes ? { extraRoutes: opts.extraRoutes } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
  if (!opts.listen) await service.app.ready();
  // the data dir testConfig made goes with it (a run of the suite left about 1,500 of them in /tmp); a test's own stays
  const ownDir = opts.env?.DATA_DIR === undefined;
  return {
    ...service,
    config,
    testDb,
    close: () => service.stop().finally(() => ownDir && fs.rmSync(config.DATA_DIR, { recursive: true, force: true })),
  };
}
