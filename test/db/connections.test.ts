// D244: the service's connections on an operator's PostgreSQL. Its transactions run READ COMMITTED whatever the
// database's or role's default_transaction_isolation (a serializable database answered concurrent sessions:batch with
// 500); the pool's size is DB_POOL_SIZE; and db_pool_waiting_requests counts only requests that really wait (an idle
// service's scrape counted its own query).
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createDb, poolStats, type DbHandle } from '../../src/db/database.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { eventually } from '../helpers/ocpp-factories.ts';

const configError = (env: Record<string, string>) => {
  try {
    loadConfig(env);
    return '';
  } catch (e) {
    return (e as Error).message;
  }
};

describe('D244: DB_POOL_SIZE', () => {
  it('defaults to 10 and is bounded 5–1000', () => {
    expect(loadConfig({}).DB_POOL_SIZE).toBe(10);
    expect(loadConfig({ DB_POOL_SIZE: '5' }).DB_POOL_SIZE).toBe(5);
    expect(loadConfig({ DB_POOL_SIZE: '1000' }).DB_POOL_SIZE).toBe(1000);
    for (const bad of ['4', '1001', 'ten']) expect(configError({ DB_POOL_SIZE: bad })).toContain('DB_POOL_SIZE: must be a whole number 5–1000');
  });
});

describe.runIf(!!process.env.DATABASE_URL)('D244: the service on an operator’s PostgreSQL', () => {
  const handles: DbHandle[] = [];
  afterAll(async () => {
    for (const h of handles.reverse()) await h.close().catch(() => undefined);
  });
  const open = async (opts: Parameters<typeof createDb>[0]) => {
    const h = await createDb(opts);
    handles.push(h);
    return h;
  };

  it('the pool of createDb(config) has DB_POOL_SIZE connections at most', async () => {
    const h = await open(loadConfig({ DATABASE_URL: process.env.DATABASE_URL, DB_POOL_SIZE: '7' }));
    await sql`select 1`.execute(h.db);
    expect(poolStats(h.db)?.max).toBe(7);
  });

  it('a database whose default_transaction_isolation is serializable: the service’s transactions run read committed', { timeout: 30_000 }, async () => {
    const test: TestDb = await createTestDb();
    handles.push(test);
    const name = new URL(test.url!).pathname.slice(1);
    await sql`alter database ${sql.id(name)} set default_transaction_isolation = 'serializable'`.execute(test.db);
    // the database's setting holds for a plain connection…
    const plain = new pg.Client({ connectionString: test.url! });
    await plain.connect();
    try {
      expect((await plain.query('show transaction_isolation')).rows[0].transaction_isolation).toBe('serializable');
    } finally {
      await plain.end();
    }
    // …not for the service's, from their first statement, in and out of a transaction
    const h = await open({ DATABASE_URL: test.url!, poolSize: 3 });
    const shown = await Promise.all([1, 2, 3].map(() => sql<{ transaction_isolation: string }>`show transaction_isolation`.execute(h.db)));
    expect(shown.map((r) => r.rows[0]!.transaction_isolation)).toEqual(['read committed', 'read committed', 'read committed']);
    const inTrx = await h.db.transaction().execute((trx) => sql<{ transaction_isolation: string }>`show transaction_isolation`.execute(trx));
    expect(inTrx.rows[0]!.transaction_isolation).toBe('read committed');
    // a deployment's own options in DATABASE_URL still come after the service's
    const own = new URL(test.url!);
    own.searchParams.set('options', '-c default_transaction_isolation=repeatable\\ read');
    const h2 = await open({ DATABASE_URL: own.toString(), poolSize: 1 });
    expect((await sql<{ transaction_isolation: string }>`show transaction_isolation`.execute(h2.db)).rows[0]!.transaction_isolation).toBe('repeatable read');
    await h2.close();

    // two transactions updating one row at once (two uploads of one session): the second waits for the first and
    // then updates the row it commits; under serializable it failed with 40001 (the 500 of sessions:batch)
    await sql`create table d244_counter (id int primary key, n int not null)`.execute(h.db);
    await sql`insert into d244_counter values (1, 0)`.execute(h.db);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let updated!: () => void;
    const firstUpdated = new Promise<void>((r) => (updated = r));
    const first = h.db.transaction().execute(async (trx) => {
      await sql`update d244_counter set n = n + 1 where id = 1`.execute(trx);
      updated();
      await gate;
    });
    await firstUpdated;
    const second = h.db.transaction().execute((trx) => sql`update d244_counter set n = n + 1 where id = 1`.execute(trx));
    const settled = Promise.allSettled([first, second]);
    try {
      // the second one's update has begun (its snapshot taken) and waits for the first one's row lock
      await eventually(async () => {
        const waiting = await sql<{ n: number }>`
          select count(*)::int as n from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock' and query like 'update d244_counter%'`.execute(test.db);
        expect(waiting.rows[0]!.n).toBe(1);
      }, 10_000);
    } finally {
      release();
    }
    const [a, b] = await settled;
    expect(a.status).toBe('fulfilled');
    expect(b.status === 'rejected' ? (b.reason as { code?: string }).code : 'fulfilled').toBe('fulfilled');
    expect((await sql<{ n: number }>`select n from d244_counter where id = 1`.execute(h.db)).rows[0]!.n).toBe(2);
  });

  it('db_pool_waiting_requests counts a request that waits for a busy pool', { timeout: 30_000 }, async () => {
    const h = await open({ DATABASE_URL: process.env.DATABASE_URL, poolSize: 2 });
    const busy = [1, 2].map(() => sql`select pg_sleep(0.5)`.execute(h.db));
    await eventually(() => expect(poolStats(h.db)).toMatchObject({ total: 2, idle: 0 }));
    const queued = sql`select 1`.execute(h.db);
    await eventually(() => expect(poolStats(h.db)?.waiting).toBe(1));
    await Promise.all([...busy, queued]);
    expect(poolStats(h.db)).toMatchObject({ idle: 2, waiting: 0 });
  });

  describe('an idle service', () => {
    let svc: TestService | undefined;
    afterAll(async () => svc?.close());

    it('scrapes db_pool_waiting_requests 0 (its own query took an idle connection)', { timeout: 60_000 }, async () => {
      svc = await createTestService({ listen: true });
      const waiting = async () => {
        const res = await fetch(`${svc!.url}/metrics`);
        expect(res.status).toBe(200);
        const text = await res.text();
        const idle = Number(/^db_pool_connections\{state="idle"\} (\S+)$/m.exec(text)?.[1]);
        expect(idle).toBeGreaterThanOrEqual(1);
        return Number(/^db_pool_waiting_requests (\S+)$/m.exec(text)?.[1]);
      };
      const seen: number[] = [];
      for (let i = 0; i < 5; i++) seen.push(await waiting());
      expect(seen).toEqual([0, 0, 0, 0, 0]);
    });
  });
});
