// D263: every round trip of the pool is bounded on the client (node-postgres' query_timeout, DB_STATEMENT_TIMEOUT_MS
// + 5 s by default; 300 ms here). A round trip past it fails with QueryTimeoutError (SQLSTATE 08006, transient) and
// its connection is closed, so no later query waits behind the unanswered one or meets its late answer. A session
// whose statement_timeout was set to 0 (the migrations, src/db/migrate.ts) has no client bound either until it is reset.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, poolStats, queryTimeoutFor, QueryTimeoutError, type DbHandle } from '../../src/db/database.ts';
import { isTransientDbError } from '../../src/db/transient.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';

describe.skipIf(!process.env.DATABASE_URL)('D263: the client-side bound of a round trip', () => {
  let test: TestDb;
  let h: DbHandle;
  beforeAll(async () => {
    test = await createTestDb();
    h = await createDb({ DATABASE_URL: test.url!, poolSize: 2, queryTimeoutMs: 300 });
  });
  afterAll(async () => {
    await h?.close();
    await test?.close();
  });

  it('is the statement timeout plus 5 s, none with none', () => {
    expect(queryTimeoutFor(30_000)).toBe(35_000);
    expect(queryTimeoutFor(0)).toBe(0);
  });

  it('a round trip past it fails as transient, and its connection leaves the pool', async () => {
    const pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(h.db)).rows[0]!.pid;
    const err = await sql`select pg_sleep(1)`.execute(h.db).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(QueryTimeoutError);
    expect(err).toMatchObject({ code: '08006' });
    expect(isTransientDbError(err)).toBe(true);
    // the next queries run on a new connection, at once (not behind the unanswered pg_sleep)
    const started = Date.now();
    const pids = await Promise.all([1, 2].map(() => sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(h.db).then((r) => r.rows[0]!.pid)));
    expect(Date.now() - started).toBeLessThan(900);
    expect(pids).not.toContain(pid);
    expect(poolStats(h.db)!.total).toBeLessThanOrEqual(2);
  });

  it('set statement_timeout = 0 lifts it on that connection (the migrations); reset brings it back', async () => {
    await h.db.connection().execute(async (conn) => {
      await sql`set statement_timeout = 0`.execute(conn);
      await sql`select pg_sleep(0.6)`.execute(conn);
      await sql`reset statement_timeout`.execute(conn);
      await expect(sql`select pg_sleep(0.6)`.execute(conn)).rejects.toBeInstanceOf(QueryTimeoutError);
    });
  });

  it("the pool's connections have TCP keepalive, the server's probes set too", async () => {
    const r = await sql<{ idle: string; count: string }>`select current_setting('tcp_keepalives_idle') as idle, current_setting('tcp_keepalives_count') as count`.execute(h.db);
    expect(r.rows[0]).toEqual({ idle: '60', count: '6' });
  });
});
