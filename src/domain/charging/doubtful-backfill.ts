// D215: the sessions stored before D176 that hold a doubtful reading, found once and recomputed. Until D176 a reading
// whose own value is doubtful (an invalid signature, a timestamp ahead of the gateway's clock) was the base of the next
// step; a session stored then keeps the energy of that rule until something recomputes it, while its months follow the
// new rule. Only a session with such a reading, not accepted, can come out differently (an accepted one is a base under
// both rules), so only those are recomputed, each as an operator's decision recomputes it (review.ts).
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Deps } from '../../deps.ts';
import { ANOMALY, ENERGY_REGISTER, maxPowerWOf } from './readings.ts';
import { recomputeSession } from './session-energy.ts';

/**
 * Blocks of one partition of meter_readings read by one statement of the search (64 MB at PostgreSQL's 8 kB): each
 * statement stays well within the pool's statement_timeout (C4.12) and holds its snapshot briefly, however large the
 * month, and a stopping service waits for one slice at most.
 */
export const SEARCH_SLICE_BLOCKS = 8192;

/** Sessions recomputed in one transaction: their row locks are held for that long (a running one's ingest waits). */
export const RECOMPUTE_BATCH_SESSIONS = 25;

interface Leaf {
  schema: string;
  name: string;
  blocks: number;
}

/** The tables that hold meter_readings' rows (its month partitions and the default one), with their size in blocks. */
async function readingLeaves(db: Db): Promise<Leaf[]> {
  const r = await sql<Leaf>`
    select n.nspname as schema, c.relname as name,
           (pg_relation_size(c.oid) / current_setting('block_size')::bigint)::int as blocks
      from pg_partition_tree('meter_readings'::regclass) t
      join pg_class c on c.oid = t.relid
      join pg_namespace n on n.oid = c.relnamespace
     where t.isleaf
     order by c.relname`.execute(db);
  return r.rows;
}

/**
 * The ids of the sessions with a register reading whose own value is doubtful and not accepted: the predicate of
 * readingFlag (readings.ts) and of migrations/0078, in SQL. No index answers it (only invalid signatures have one:
 * migrations/0056, and a future_timestamp is rare), so every partition is read once, in slices of blocks (a TID
 * range scan reads only the slice's blocks). Rows written after a partition's size was taken are the live path's,
 * which applies D176 already. `stop` is asked between slices; it ends the search with null.
 */
export async function doubtfulSessionIds(
  db: Db,
  stop: () => boolean,
  progress: { blocks_read: number },
  sliceBlocks = SEARCH_SLICE_BLOCKS,
): Promise<string[] | null> {
  const ids = new Set<string>();
  for (const leaf of await readingLeaves(db)) {
    for (let from = 0; from < leaf.blocks; from += sliceBlocks) {
      if (stop()) return null;
      const to = Math.min(from + sliceBlocks, leaf.blocks);
      const r = await sql<{ session_id: string }>`
        select distinct session_id from ${sql.id(leaf.schema, leaf.name)}
         where ctid >= ${`(${from},0)`}::tid and ctid < ${`(${to},0)`}::tid
           and session_id is not null
           and measurand = ${ENERGY_REGISTER} and phase = ''
           and (anomaly = ${ANOMALY.future} or signature_status = 'invalid')
           and review is distinct from 'accepted'`.execute(db);
      for (const row of r.rows) ids.add(row.session_id);
      progress.blocks_read += to - from;
    }
  }
  return [...ids].sort();
}

export interface RecomputedSession {
  session_id: string;
  charger_id: string;
  energy_wh_before: string;
  energy_wh_after: string;
}

type EnergyState = { energy_wh: string; held_wh: string; review_status: string | null; review_reason: string | null };
const sameEnergy = (a: EnergyState, b: EnergyState) =>
  a.energy_wh === b.energy_wh && a.held_wh === b.held_wh && a.review_status === b.review_status && a.review_reason === b.review_reason;

/**
 * Recomputes the sessions `ids` in one transaction, running or completed: each row locked first, in id order, as the
 * ingest's set-based path locks them, so an ingest and this never write over each other (a running session's next
 * reading continues from what this wrote). recomputeSession stamps updated_at, so the next energy aggregation
 * recomputes every month the session's readings span, as after a decision. Returns the sessions whose energy, held
 * energy or review changed.
 */
export async function recomputeDoubtfulSessions(deps: Deps, ids: string[]): Promise<RecomputedSession[]> {
  if (ids.length === 0) return [];
  return deps.db.transaction().execute(async (trx) => {
    const sessions = await trx
      .selectFrom('charging_sessions')
      .select(['id', 'charger_id', 'energy_wh', 'held_wh', 'review_status', 'review_reason'])
      .where('id', 'in', ids)
      .orderBy('id')
      .forUpdate()
      .execute();
    const maxW = await maxPowerWOf(trx, [...new Set(sessions.map((s) => s.charger_id))], deps.config.OCPP_MAX_POWER_W);
    const changed: RecomputedSession[] = [];
    for (const s of sessions) {
      await recomputeSession(trx, s.id, maxW.get(s.charger_id)!);
      const after = await trx
        .selectFrom('charging_sessions')
        .select(['energy_wh', 'held_wh', 'review_status', 'review_reason'])
        .where('id', '=', s.id)
        .executeTakeFirstOrThrow();
      if (!sameEnergy(s, after)) changed.push({ session_id: s.id, charger_id: s.charger_id, energy_wh_before: s.energy_wh, energy_wh_after: after.energy_wh });
    }
    return changed;
  });
}
