// One createDb(config): node-postgres when DATABASE_URL is set, embedded PGlite otherwise (C0.2).
// Both return the same JS types: int8 and numeric as strings, timestamptz as Date, date as 'YYYY-MM-DD'.
import fs from 'node:fs';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './tables.ts';
import { PGliteDialect } from './pglite-dialect.ts';
import { PreparingClient } from './prepared.ts';
import { lockDataDir } from './data-dir-lock.ts';

pg.types.setTypeParser(pg.types.builtins.DATE, (v) => v);

export type Db = Kysely<Database>;

export interface DbHandle {
  db: Db;
  kind: 'pg' | 'pglite';
  /** PostgreSQL: the connection string (the event bus opens its own listening connection) */
  url?: string;
  /** PGlite: LISTEN on the embedded database (the event bus) */
  pglite?: { listen(channel: string, cb: (payload: string) => void): Promise<() => Promise<void>> };
  /** Closes the pool or the embedded database. Safe to call twice. */
  close(): Promise<void>;
}

export interface DbOptions {
  DATABASE_URL?: string | undefined;
  DATA_DIR?: string | undefined;
  /** PGlite only: load this data dir tarball (a migrated template) instead of running initdb. */
  loadDataDir?: Blob | undefined;
  /** PGlite only: keep the database in memory. */
  inMemory?: boolean;
  /** tests: the pool's size, before DB_POOL_SIZE */
  poolSize?: number;
  /** D244: the most connections the service's pool opens (config DB_POOL_SIZE, default 10) */
  DB_POOL_SIZE?: number | undefined;
  /**
   * C4.12: PostgreSQL statement_timeout of every pooled connection, in ms (0 = none; default 30 s as in config).
   * Not applied on PGlite: it accepts the setting but, being one in-process backend without timer interrupts,
   * never cancels a statement, so setting it would only pretend.
   */
  DB_STATEMENT_TIMEOUT_MS?: number | undefined;
  /** PostgreSQL: the ingest batch statements as named prepared statements (prepared.ts, D82; default true) */
  DB_PREPARED_STATEMENTS?: boolean | undefined;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
export const DEFAULT_POOL_SIZE = 10;

/** D225: what a node-postgres pool holds now, for the pool gauges of /metrics (db/health.ts) */
export interface PoolStats {
  /** connections open, idle or checked out */
  total: number;
  idle: number;
  /** requests waiting for a connection (every one is checked out and the pool is at its max) */
  waiting: number;
  max: number;
}

/** each PostgreSQL database's pool (PGlite has none: one in-process session) */
const pools = new WeakMap<Db, pg.Pool>();

/** The pool behind `db` now; undefined on PGlite. Reads four numbers the pool keeps, no query. */
export function poolStats(db: Db): PoolStats | undefined {
  const p = pools.get(db);
  // D244: pg-pool queues every request, also one an idle connection is about to take (handed over on the next tick):
  // those are not waiting, and an idle service's scrape counted its own query as 1 waiting for ever
  return p && { total: p.totalCount, idle: p.idleCount, waiting: Math.max(0, p.waitingCount - p.idleCount), max: p.options.max ?? DEFAULT_POOL_SIZE };
}

/**
 * D132: the service's statements are short (a page, a batch of readings); PostgreSQL compiles a statement to machine
 * code when its estimated cost passes `jit_above_cost`, and an estimate far above the truth (GET /chargers' visibility
 * test guessed half the chargers table) cost 250–300 ms of compiling for a statement that runs in 8 ms. JIT is off
 * on the service's connections.
 * D244: and their transactions are READ COMMITTED, what the service's transactions are written for (a row updated by
 * another transaction meanwhile is re-read, not an error): on a database whose default_transaction_isolation was
 * serializable, concurrent `sessions:batch` answered 500 (40001) and chargers were refused at the upgrade (repeatable
 * read fails a concurrent update the same way). Both travel in the startup parameter `options`, so they hold from the first statement of every connection
 * and over the database's and role's own settings (ALTER DATABASE/ROLE … SET). The connection string's own `options`
 * come after ours, so a deployment can still change either.
 */
export const SERVICE_OPTIONS = '-c jit=off -c default_transaction_isolation=read\\ committed';

export function withServiceOptions(url: string): { connectionString: string; options: string } {
  try {
    const u = new URL(url);
    const own = u.searchParams.get('options');
    // node-postgres lets the connection string's parameters win over the config's: its `options` move here
    u.searchParams.delete('options');
    return { connectionString: u.toString(), options: own ? `${SERVICE_OPTIONS} ${own}` : SERVICE_OPTIONS };
  } catch {
    return { connectionString: url, options: SERVICE_OPTIONS }; // not a URL (a key=value string): used as given
  }
}

export async function createDb(opts: DbOptions): Promise<DbHandle> {
  if (opts.DATABASE_URL) {
    const pool = new pg.Pool({
      // D132, D244: no JIT compilation, READ COMMITTED (first, so `options` in DATABASE_URL may change them)
      ...withServiceOptions(opts.DATABASE_URL),
      // D244: DB_POOL_SIZE; with the event bus's listening connection, each process opens this plus one
      max: opts.poolSize ?? opts.DB_POOL_SIZE ?? DEFAULT_POOL_SIZE,
      application_name: 'ere-gateway',
      // a server that does not answer fails requests (and /readyz) instead of queueing them forever
      connectionTimeoutMillis: 10_000,
      // C4.12: sent as a startup parameter, so it holds on every connection of the pool from its first statement
      statement_timeout: opts.DB_STATEMENT_TIMEOUT_MS ?? DEFAULT_STATEMENT_TIMEOUT_MS,
      ...(opts.DB_PREPARED_STATEMENTS === false ? {} : { Client: PreparingClient }),
    });
    // A pool error on an idle client (server restart) must not crash the process.
    pool.on('error', () => {});
    // C4.11: nor may one on a checked-out client (a lost connection mid-query emits 'error' on it, and the
    // pool listens only while it is idle): the query fails, is retried, and the broken client leaves the pool.
    pool.on('connect', (client) => client.on('error', () => {}));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    pools.set(db, pool);
    let closed = false;
    return {
      db,
      kind: 'pg',
      url: opts.DATABASE_URL,
      async close() {
        if (closed) return;
        closed = true;
        await db.destroy();
      },
    };
  }
  const { PGlite, types } = await import('@electric-sql/pglite');
  const dataDir = opts.inMemory ? undefined : path.resolve(opts.DATA_DIR ?? './data/sandbox', 'pglite');
  // D150: one process per data dir; a second one stops here, before it opens the files the first one writes
  const lock = dataDir ? await lockDataDir(path.dirname(dataDir)) : undefined;
  if (dataDir) fs.mkdirSync(dataDir, { recursive: true });
  let pglite: InstanceType<typeof PGlite>;
  try {
    pglite = await PGlite.create(dataDir ?? 'memory://', {
      parsers: {
        [types.INT8]: (v: string) => v,
        [types.NUMERIC]: (v: string) => v,
        [types.DATE]: (v: string) => v,
      },
      ...(opts.loadDataDir ? { loadDataDir: opts.loadDataDir } : {}),
    });
  } catch (err) {
    await lock?.release();
    throw err;
  }
  const db = new Kysely<Database>({ dialect: new PGliteDialect(pglite) });
  let closed = false;
  return {
    db,
    kind: 'pglite',
    pglite: { listen: (channel, cb) => pglite.listen(channel, cb) },
    async close() {
      if (closed) return;
      closed = true;
      try {
        await db.destroy();
      } finally {
        await lock?.release();
      }
    },
  };
}

/** true when the database answers a trivial query within timeoutMs. */
export async function ping(db: Db, timeoutMs = 3000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([sql`select 1`.execute(db).then(() => true), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
