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

/**
 * Runs fn under the lock `name`. With wait=false it returns { acquired: false } at once when the lock is taken;
 * with wait=true it waits for the holder. fn's own errors propagate. fn is handed the connection that holds the
 * lock (PGlite: db itself), for work that had better stay on one backend than take a second one from the pool.
 */
export async function withAdvisoryLock<T>(
  db: Db,
  kind: 'pg' | 'pglite',
  name: string,
  fn: (held: Db) => Promise<T>,
  opts: { wait: boolean },
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
    try {
      return { acquired: true, value: await fn(conn) } as const;
    } finally {
      await sql`select pg_advisory_unlock(${LOCK_NAMESPACE}, hashtext(${name}))`.execute(conn);
    }
  });
}

/** Whether any process (PGlite: this one) holds the lock `name` now: for reading, never for deciding to run. */
export async function isAdvisoryLockHeld(db: Db, kind: 'pg' | 'pglite', name: string): Promise<boolean> {
  if (kind === 'pglite') return localLocks(db).has(name);
  // a two-key advisory lock shows its keys as classid and objid (oids: hashtext's negative values wrap), objsubid 2
  const r = await sql<{ held: boolean }>`
    select exists (
      select 1 from pg_locks
       where locktype = 'advisory' and objsubid = 2 and granted and database = (select oid from pg_database where datname = current_database())
         and classid::bigint = ${LOCK_NAMESPACE}::bigint
         and objid::bigint = (hashtext(${name})::bigint + 4294967296) % 4294967296
    ) as held`.execute(db);
  return r.rows[0]?.held ?? false;
}
