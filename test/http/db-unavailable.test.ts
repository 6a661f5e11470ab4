// D155: a database that cannot answer right now gives 503 service_unavailable with Retry-After, not 500
// internal_error: provoked on the test's own PostgreSQL database, never mocked. A table the route reads is locked
// from a second connection, so the route's statement waits on the lock: with a short DB_STATEMENT_TIMEOUT_MS it is
// cancelled (57014); with a long one its backend is terminated (57P01, the audit's pg_terminate_backend loop).
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type DbHandle } from '../../src/db/database.ts';
import { createLogger } from '../../src/logger.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { aUser, bearer } from '../helpers/factories.ts';

const lines: Array<{ level: number; msg: string; code?: string }> = [];
const sink = new Writable({
  write(chunk, _enc, cb) {
    for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
    cb();
  },
});

/** A second connection holding an exclusive lock on `table` until release(). */
async function lockTable(url: string, table: string): Promise<{ pid: number; release(): Promise<void> }> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  await c.query('begin');
  await c.query(`lock table ${table} in access exclusive mode`);
  const pid = (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  return { pid, release: async () => void (await c.query('rollback'), await c.end()) };
}

/** Terminates every backend of the service that waits on a lock, until `done` settles (the audit's loop). */
async function terminateWaiters(url: string, done: Promise<unknown>): Promise<number> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  let settled = false;
  void done.finally(() => (settled = true));
  let killed = 0;
  try {
    while (!settled) {
      const r = await c.query(
        `select pg_terminate_backend(pid) as ok from pg_stat_activity
          where datname = current_database() and application_name = 'ere-gateway' and wait_event_type = 'Lock'`,
      );
      killed += r.rows.length;
      await new Promise((res) => setTimeout(res, 50));
    }
  } finally {
    await c.end();
  }
  return killed;
}

// PGlite is one in-process backend with no statement timeout and nothing to terminate: these faults exist only on
// PostgreSQL, so the describe is registered only there (the suite runs on both)
const onPostgres = process.env.DATABASE_URL ? describe : () => {};

onPostgres('database faults on reads answer 503 with Retry-After (D155)', () => {
  let base: TestDb;
  let handle: DbHandle;
  let svc: TestService;
  let token: string;
  beforeAll(async () => {
    base = await createTestDb();
    handle = await createDb({ DATABASE_URL: base.url!, DB_STATEMENT_TIMEOUT_MS: 1500, poolSize: 4 });
    svc = await createTestService({ db: { ...handle, url: base.url! }, logger: createLogger({ level: 'info', destination: sink }) });
    token = (await aUser(svc.deps, { scopes: ['chargers:read'] })).token;
  });
  afterAll(async () => {
    await svc?.close();
    await handle?.close();
    await base?.close();
  });

  const getChargers = () => svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(token) });

  it('a statement cancelled by statement_timeout behind a lock: 503 service_unavailable, Retry-After, a warning', async () => {
    expect((await getChargers()).statusCode).toBe(200);
    const lock = await lockTable(base.url!, 'chargers');
    let res;
    try {
      res = await getChargers();
    } finally {
      await lock.release();
    }
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.json()).toEqual({ error: 'service_unavailable', detail: expect.stringContaining(String(res.headers['x-request-id'])) });
    expect(lines.some((l) => l.level === 40 && l.code === '57014' && l.msg === 'database unavailable; answered 503')).toBe(true);
    expect(lines.some((l) => l.level >= 50)).toBe(false);
    // and once the lock is gone the same request is served
    expect((await getChargers()).statusCode).toBe(200);
  });

  it("the service's backend terminated while it waits: 503, not 500", { timeout: 30_000 }, async () => {
    // a long statement timeout, so only the termination can end the wait
    const slow = await createDb({ DATABASE_URL: base.url!, DB_STATEMENT_TIMEOUT_MS: 60_000, poolSize: 2 });
    const other = await createTestService({ db: { ...slow, url: base.url! } });
    const lock = await lockTable(base.url!, 'chargers');
    try {
      const pending = other.app.inject({ method: 'GET', url: '/chargers', headers: bearer(token) });
      const killed = await terminateWaiters(base.url!, pending);
      const res = await pending;
      expect(killed).toBeGreaterThan(0);
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json()).toMatchObject({ error: 'service_unavailable' });
    } finally {
      await lock.release();
      await other.close();
      await slow.close();
    }
  });
});

describe('the 503 in /openapi.json (D155)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService();
  });
  afterAll(() => svc?.close());

  it('every operation documents 503 service_unavailable with Retry-After; one behind a credential also the lookup\'s 503', async () => {
    const doc = (await svc.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const listChargers = doc.paths['/chargers'].get.responses['503'];
    expect(Object.keys(listChargers.content['application/json'].examples)).toEqual([
      'Authentication_is_temporarily_unavailable_try_again_shortly',
      'service_unavailable',
    ]);
    expect(listChargers.headers).toHaveProperty('Retry-After');
    const token503 = doc.paths['/oauth/token'].post.responses['503'];
    expect(Object.keys(token503.content['application/json'].examples)).toEqual(['service_unavailable']);
    // every operation (but /readyz, whose own 503 is not_ready)
    const missing: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { responses: Record<string, any> }>>)) {
      for (const [method, op] of Object.entries(ops)) {
        const r = op.responses['503'];
        if (path !== '/readyz' && !r?.content?.['application/json']?.examples?.service_unavailable) missing.push(`${method} ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
