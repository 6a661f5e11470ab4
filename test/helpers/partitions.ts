// Which partitions of meter_readings a transaction has locked so far. PostgreSQL locks every partition a statement
// was planned over until the transaction ends, and none that the planner pruned: the locks tell whether a statement
// was planned over the months it needs or over every month kept (D74).
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.ts';

export async function lockedReadingPartitions(trx: Db): Promise<string[]> {
  const r = await sql<{ relname: string }>`
    select distinct c.relname from pg_locks l join pg_class c on c.oid = l.relation
     where l.pid = pg_backend_pid() and l.relation in (select inhrelid from pg_inherits where inhparent = 'meter_readings'::regclass)
     order by 1`.execute(trx);
  return r.rows.map((x) => x.relname);
}
