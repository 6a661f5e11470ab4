// PostgreSQL session advisory locks on a dedicated connection (db.connection()), held while `fn` runs on the
// pool. PGlite is one process per data dir (TOOLCHAIN.md §3), so there an in-process mutex per database and
// key gives the same guarantee.
import { sql } from 'kysely';
import type { Db } from './database.ts';

/** Lock keys are (namespace, hashtext(name)); the namespace keeps ours apart from other users of the server. */
export const LOCK_NAMESPACE = 0x45524547; // 'EREG'

const held = new WeakMap<Db, Map<string, Promise<unknown>>>();

function localLocks(db: Db): Map<string, Promise<unknown>> {
  let m = held.get(db);
  if (!m) held.set(db, (m = new Map()));
  return m;
}

/** D265: how the lock's connection shows the server it is alive while fn runs (PostgreSQL only) */
export interface LockLiveness {
  /** a round trip on the lock's connection this often while fn runs (default 10 s) */
  heartbeatMs: number;
  /** the lock's session ends on the server when it has been idle this long (idle_session_timeout; default 60 s) */
  idleSessionTimeoutMs: number;
}
export const DEFAULT_LOCK_LIVENESS: LockLiveness = { heartbeatMs: 10_000, idleSessionTimeoutMs: 60_000 };

export interface AdvisoryLockOptions {
  wait: boolean;
  /**
   * D265: the lock could not be released after fn (its connection was lost: the server ends the session, and the
   * lock with it). fn's own outcome is returned or thrown all the same; this is told the error (default: ignored).
   */
  onUnlockFailed?: (err: unknown) => void;
  liveness?: LockLiveness;
}

/** databases whose server has no idle_session_timeout (before PostgreSQL 14): no heartbeat there */
const noIdleSessionTimeout = new WeakSet<Db>();

/**
 * Runs fn under the lock `name`. With wait=false it returns { acquired: false } at once when the lock is taken;
 * with wait=true it waits for the holder. fn's own errors propagate. fn is handed the connection that holds the
 * lock (PGlite: db itself), for work that had better stay on one backend than take a second one from the pool.
 * D265: on PostgreSQL the lock's session gets `idle_session_timeout` (liveness, 60 s) and a round trip every 10 s
 * while fn runs, so a lock whose process or network is gone (the server's side of the connection left open, as when
 * a NAT or firewall dropped its state) is released by the server within that time instead of the ~2 h its TCP
 * keepalive takes; the setting is reset before the connection goes back to the pool. A failed unlock (the connection
 * lost meanwhile) no longer replaces fn's outcome: it is told to onUnlockFailed.
 */
export async function withAdvisoryLock<T>(
  db: Db,
  kind: 'pg' | 'pglite',
  name: string,
  fn: (held: Db) => Promise<T>,
  opts: AdvisoryLockOptions,
): Promise<{ acquired: true; value: T } | { acquired: false }> {
  if (kind === 'pglite') {
    const locks = localLocks(db);
    while (locks.has(name)) {
      if (!opts.wait) return { acquired: false };
      await locks.get(name)!.catch(() => undefined);
    }
    const p = fn(db);
    locks.set(name, p);
    try {
      return { acquired: true, value: await p };
    } finally {
      locks.delete(name);
    }
  }
  return db.connection().execute(async (conn) => {
    if (opts.wait) {
      await sql`select pg_advisory_lock(${LOCK_NAMESPACE}, hashtext(${name}))`.execute(conn);
    } else {
      const got = await sql<{ ok: boolean }>`select pg_try_advisory_lock(${LOCK_NAMESPACE}, hashtext(${name})) as ok`.execute(conn);
      if (!got.rows[0]?.ok) return { acquired: false } as const;
    }
    let stopHeartbeat = async () => {};
    try {
      stopHeartbeat = await keepAlive(db, conn, opts.liveness ?? DEFAULT_LOCK_LIVENESS);
      return { acquired: true, value: await fn(conn) } as const;
    } finally {
      await stopHeartbeat();
      try {
        await sql`select pg_advisory_unlock(${LOCK_NAMESPACE}, hashtext(${name}))`.execute(conn);
        if (!noIdleSessionTimeout.has(db)) await sql`reset idle_session_timeout`.execute(conn);
      } catch (err) {
        // the connection is broken: the pool drops it, and the server ends the session and its lock
        opts.onUnlockFailed?.(err);
      }
    }
  });
}

/** D265: idle_session_timeout on the lock's session and a round trip on it every heartbeatMs; returns the stop. */
async function keepAlive(db: Db, conn: Db, liveness: LockLiveness): Promise<() => Promise<void>> {
  if (noIdleSessionTimeout.has(db)) return async () => {};
  try {
    await sql`select set_config('idle_session_timeout', ${String(Math.max(1, Math.round(liveness.idleSessionTimeoutMs)))}, false)`.execute(conn);
  } catch (err) {
    // 42704: a server before PostgreSQL 14; its TCP keepalive settings (SERVICE_OPTIONS) are what is left
    if ((err as { code?: unknown }).code === '42704') {
      noIdleSessionTimeout.add(db);
      return async () => {};
    }
    throw err;
  }
  let beat: Promise<unknown> | undefined;
  const timer = setInterval(() => {
    // one at a time; a round trip queues behind fn's own work on this connection (one connection, one statement)
    beat ??= sql`select 1`
      .execute(conn)
      .catch(() => undefined)
      .finally(() => (beat = undefined));
  }, liveness.heartbeatMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await beat;
  };
}

/** Which of `names` any process (PGlite: this one) holds now, in one statement: for reading, never for deciding to run. */
export async function heldAdvisoryLocks(db: Db, kind: 'pg' | 'pglite', names: string[]): Promise<Set<string>> {
  if (kind === 'pglite') return new Set(names.filter((n) => localLocks(db).has(n)));
  if (names.length === 0) return new Set();
  // a two-key advisory lock shows its keys as classid and objid (oids: hashtext's negative values wrap), objsubid 2
  const r = await sql<{ name: string }>`
    select n.name from unnest(${names}::text[]) as n(name)
     where exists (
       select 1 from pg_locks
        where locktype = 'advisory' and objsubid = 2 and granted and database = (select oid from pg_database where datname = current_database())
          and classid::bigint = ${LOCK_NAMESPACE}::bigint
          and objid::bigint = (hashtext(n.name)::bigint + 4294967296) % 4294967296
     )`.execute(db);
  return new Set(r.rows.map((row) => row.name));
}
