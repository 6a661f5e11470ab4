// Holds an ACCESS EXCLUSIVE lock on a table of a test service's database (a stalled database, as the service sees
// it) until released: the statements that touch the table wait.
import { sql } from 'kysely';
import type { TestService } from './app.ts';

export async function lockTable(svc: TestService, table: string): Promise<() => Promise<void>> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const held = svc.deps.db.transaction().execute(async (trx) => {
    await sql`lock table ${sql.table(table)} in access exclusive mode`.execute(trx);
    locked();
    await gate;
  });
  await Promise.race([isLocked, held]);
  return async () => {
    release();
    await held;
  };
}
