// D156: a charger's quarantine has a budget, in bytes per rolling day. An unusable message is acknowledged only
// once it is kept (C4.11), so one charger sending unusable 250 KB MeterValues as fast as it could wrote ~11 MB/s to
// the database for as long as it liked. Past the budget the message is refused (the charger keeps it and resends),
// never acknowledged unkept. The count is in PostgreSQL (migrations/0072), so it holds across processes.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/tables.ts';

/** Thrown when a charger's quarantine budget is spent: nothing was kept, and the caller must not acknowledge. */
export class QuarantineBudgetSpent extends Error {
  constructor(readonly chargerId: string) {
    super('quarantine budget spent');
  }
}

const HOUR_MS = 3_600_000;

/**
 * Adds `bytes` to the charger's count for this hour when the last 24 hours (this one included) hold less than
 * `limit`; returns false, counting nothing, otherwise. So one message may go past the budget by its own size, and
 * then nothing more is kept until older hours leave the window. Run in the transaction that keeps the message, so a
 * failed insert counts nothing. The charger's hours that left the window are deleted on the way (at most 25 rows per
 * charger ever stay). Messages of one charger are handled one at a time (its socket's queue), so two never race here.
 */
export async function chargeQuarantineBudget(db: Kysely<Database>, chargerId: string, bytes: number, limit: number, now: Date): Promise<boolean> {
  const hour = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
  const windowStart = new Date(hour.getTime() - 23 * HOUR_MS);
  const res = await sql<{ bytes: string }>`
    with prior as (
      select coalesce(sum(bytes), 0) as used from ocpp_quarantine_budget
      where charger_id = ${chargerId} and hour >= ${windowStart}
    ), expired as (
      delete from ocpp_quarantine_budget where charger_id = ${chargerId} and hour < ${windowStart}
    )
    insert into ocpp_quarantine_budget (charger_id, hour, bytes)
    select ${chargerId}, ${hour}, ${bytes} from prior where prior.used < ${limit}
    on conflict (charger_id, hour) do update set bytes = ocpp_quarantine_budget.bytes + excluded.bytes
    returning bytes`.execute(db);
  return res.rows.length > 0;
}
