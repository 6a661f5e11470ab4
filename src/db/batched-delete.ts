// Deletes the rows of a table that match a condition a few thousand at a time, so a large backlog never holds one
// long statement (statement_timeout, C4.12) or one long lock. For the retention jobs.
import { type RawBuilder, sql } from 'kysely';
import type { Db } from './database.ts';

/** Deletes every row of `table` where `where` holds, `batch` rows per statement; returns how many were deleted. */
export async function deleteInBatches(db: Db, table: string, where: RawBuilder<unknown>, batch = 5_000): Promise<number> {
  let deleted = 0;
  for (;;) {
    const r = await sql`delete from ${sql.table(table)} where id in (select id from ${sql.table(table)} where ${where} limit ${batch})`.execute(db);
    const n = Number(r.numAffectedRows ?? 0);
    deleted += n;
    if (n < batch) return deleted;
  }
}
