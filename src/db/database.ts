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
  /** tests: the client-side bound of a round trip in ms, before DB_STATEMENT_TIMEOUT_MS + QUERY_TIMEOUT_MARGIN_MS (D263) */
  queryTimeoutMs?: number;
  /** tests: how long getting a connection may take, in ms, before CONNECT_TIMEOUT_MS */
  connectTimeoutMs?: number;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;
export const DEFAULT_POOL_SIZE = 10;
/** how long getting a pooled connection (a free one, or a new one opened) may take */
export const CONNECT_TIMEOUT_MS = 10_000;

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
 * D265: and PostgreSQL probes each of the service's connections after 60 s of silence, every 10 s, 6 times: a
 * backend whose client is gone (a NAT or firewall that dropped the connection's state, a host that vanished) ends
 * within about 2 minutes, with its session's advisory locks and an open transaction's row locks, instead of after
 * the server's default of about 2 h 11 min (tcp_keepalives_idle 7200). The three are ordinary settings (any role may
 * set them); on a Unix socket PostgreSQL ignores them.
 */
export const SERVICE_OPTIONS =
  '-c jit=off -c default_transaction_isolation=read\\ committed -c tcp_keepalives_idle=60 -c tcp_keepalives_interval=10 -c tcp_keepalives_count=6';

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

/** D263: how far above DB_STATEMENT_TIMEOUT_MS the client gives up on a round trip (the server's own cancel normally wins) */
export const QUERY_TIMEOUT_MARGIN_MS = 5_000;
/** D263: TCP keepalive on every connection the service opens: the first probe after this much silence */
export const KEEPALIVE_INITIAL_DELAY_MS = 10_000;
/** D263: node-postgres' TCP keepalive settings, for the pool, the event bus's and any other connection of the service */
export const CLIENT_KEEPALIVE = { keepAlive: true, keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS } as const;

/** D263: the client-side bound of a round trip for a statement_timeout of `statementMs` (0, none: none either) */
export function queryTimeoutFor(statementMs: number): number {
  return statementMs > 0 ? statementMs + QUERY_TIMEOUT_MARGIN_MS : 0;
}

/** D263: a round trip the database did not answer within the client-side bound; its connection was closed. */
export class QueryTimeoutError extends Error {
  /** SQLSTATE connection_failure: the connection is gone (closed here), the database unreachable or too slow */
  readonly code = '08006';
  constructor(timeoutMs: number, cause: unknown) {
    super(`Query read timeout: the database did not answer within ${timeoutMs} ms; the connection was closed`, { cause });
    this.name = 'QueryTimeoutError';
  }
}

/** `set statement_timeout = <ms>` and `reset statement_timeout`, as migrate() sends them */
const STATEMENT_TIMEOUT_SET = /^\s*(?:set\s+(?:session\s+)?statement_timeout\s*(?:=|to)\s*'?(\d+)'?|reset\s+statement_timeout)\s*;?\s*$/i;

type ClientClass = typeof pg.Client;
interface ClientInternals {
  /** node-postgres' own flag, which pg-pool reads when a client comes back: false, the client leaves the pool */
  _queryable: boolean;
  connectionParameters: { query_timeout?: number | false };
  connection: { stream: { destroy(): void } };
}

/**
 * D263: a pg client whose every round trip is bounded on the client side (node-postgres' `query_timeout`, the pool's
 * option). node-postgres only fails the query when the time is up: the connection stays in use by the unanswered
 * statement, goes back to the pool, and the next query on it waits behind that one (for ever on a half-open socket; a
 * late answer arriving on a reused connection). Here the connection is closed at once, so the pool drops it and the
 * next query opens a new one, and the error becomes a QueryTimeoutError (SQLSTATE 08006): transient (C4.11), 503
 * service_unavailable over HTTP and CALLERROR InternalError for a charger (D155).
 * The bound follows the session's statement_timeout: `set statement_timeout = 0` (the migrations) lifts it on that
 * connection, `reset statement_timeout` brings it back, as the server's limit does.
 */
function boundedClient(Base: ClientClass): ClientClass {
  return class BoundedClient extends Base {
    private readonly defaultBound = (this as unknown as ClientInternals).connectionParameters.query_timeout || 0;

    private settings(): ClientInternals['connectionParameters'] {
      return (this as unknown as ClientInternals).connectionParameters;
    }

    /** err as it should reach the caller; a read timeout closes the connection first */
    private failed(err: unknown): unknown {
      if (!(err instanceof Error) || err.message !== 'Query read timeout') return err;
      const timeoutMs = Number(this.settings().query_timeout) || this.defaultBound;
      // not queryable from now on: the pool removes it when it comes back (its socket's close comes a tick later,
      // and a query handed this connection meanwhile met "Connection terminated unexpectedly")
      (this as unknown as ClientInternals)._queryable = false;
      try {
        (this as unknown as ClientInternals).connection.stream.destroy();
      } catch {
        // already gone
      }
      return new QueryTimeoutError(timeoutMs, err);
    }

    /** after a statement succeeded: the bound follows a change of the session's statement_timeout */
    private follow(text: unknown): void {
      if (typeof text !== 'string') return;
      const m = STATEMENT_TIMEOUT_SET.exec(text);
      if (!m) return;
      const bound = m[1] === undefined ? this.defaultBound : queryTimeoutFor(Number(m[1]));
      this.settings().query_timeout = bound || false;
    }

    override query(...args: any[]): any {
      const text = args[0] as unknown;
      const last = args.length - 1;
      if (last > 0 && typeof args[last] === 'function') {
        const cb = args[last] as (err: unknown, res: unknown) => void;
        args[last] = (err: unknown, res: unknown) => {
          if (!err) this.follow(text);
          cb(err ? this.failed(err) : err, res);
        };
        return (super.query as (...a: unknown[]) => unknown)(...args);
      }
      const r = (super.query as (...a: unknown[]) => unknown)(...args) as Promise<unknown> | undefined;
      if (!r || typeof (r as { then?: unknown }).then !== 'function') return r;
      return r.then(
        (res) => {
          this.follow(text);
          return res;
        },
        (err: unknown) => {
          throw this.failed(err);
        },
      );
    }
  } as unknown as ClientClass;
}

const BoundedPlainClient = boundedClient(pg.Client);
const BoundedPreparingClient = boundedClient(PreparingClient);

export async function createDb(opts: DbOptions): Promise<DbHandle> {
  if (opts.DATABASE_URL) {
    const statementTimeout = opts.DB_STATEMENT_TIMEOUT_MS ?? DEFAULT_STATEMENT_TIMEOUT_MS;
    const queryTimeout = opts.queryTimeoutMs ?? queryTimeoutFor(statementTimeout);
    const pool = new pg.Pool({
      // D132, D244: no JIT compilation, READ COMMITTED (first, so `options` in DATABASE_URL may change them)
      ...withServiceOptions(opts.DATABASE_URL),
      // D244: DB_POOL_SIZE; with the event bus's listening connection, each process opens this plus one
      max: opts.poolSize ?? opts.DB_POOL_SIZE ?? DEFAULT_POOL_SIZE,
      application_name: 'ere-gateway',
      // a server that does not answer fails requests (and /readyz) instead of queueing them forever
      connectionTimeoutMillis: opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
      // C4.12: sent as a startup parameter, so it holds on every connection of the pool from its first statement
      statement_timeout: statementTimeout,
      // D263: every round trip bounded on the client too (the server never sees a statement the network drops; a
      // timed-out connection is closed, boundedClient), and TCP keepalive so that an idle dead connection is noticed
      ...(queryTimeout > 0 ? { query_timeout: queryTimeout } : {}),
      ...CLIENT_KEEPALIVE,
      Client: opts.DB_PREPARED_STATEMENTS === false ? BoundedPlainClient : BoundedPreparingClient,
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
