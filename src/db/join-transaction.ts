// A transaction seen as a Db whose transaction() joins it instead of opening a new one. Code written against
// Db opens its own transaction (`db.transaction().execute(...)`); handed this, that code becomes part of the
// caller's transaction: the claim flow runs the accounts area's writes in its own, the OCPP ingest pipeline runs
// many chargers' messages in one (group commit).
import type { Transaction } from 'kysely';
import type { Db } from './database.ts';
import type { Database } from './tables.ts';

export function joinTransaction(trx: Transaction<Database>): Db {
  const joined: Db = new Proxy(trx, {
    get(target, prop) {
      if (prop === 'transaction') return () => ({ execute: <T>(fn: (t: Db) => Promise<T>) => fn(joined) });
      const v: unknown = Reflect.get(target, prop, target);
      // Kysely keeps its state in private fields: methods run on the transaction itself, not on the proxy
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return joined;
}
