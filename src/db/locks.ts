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
