// C7.1: at most STREAM_MAX_PER_TOKEN open push streams per personal token, counted in PostgreSQL so the cap holds
// across processes (migrations/0059_charger_streams.sql). A slot is taken when a stream opens, given back when it
// ends, and renewed by its process every keep-alive tick; a slot of a killed process lapses after SLOT_TTL_SECONDS.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { DomainError } from '../errors.ts';

/** A slot not renewed for this long no longer counts (the holding process died): 4 keep-alive ticks, at least 60 s */
export const slotTtlSeconds = (keepAliveSeconds: number) => Math.max(60, 4 * keepAliveSeconds);

/** Takes a slot for a new stream of this token (its id), or throws too_many_streams (429). */
export async function takeStreamSlot(deps: Deps, tokenId: string): Promise<string> {
  const max = deps.config.STREAM_MAX_PER_TOKEN;
  const ttl = slotTtlSeconds(deps.config.STREAM_KEEPALIVE_SECONDS);
  return deps.db.transaction().execute(async (trx) => {
    // one opening at a time per token, so two processes never both take the last slot
    await sql`select pg_advisory_xact_lock(hashtextextended(${'charger_streams:' + tokenId}, 0))`.execute(trx);
    await trx.deleteFrom('charger_streams').where('token_id', '=', tokenId).where('expires_at', '<=', sql<Date>`now()`).execute();
    const { n } = await trx
      .selectFrom('charger_streams')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('token_id', '=', tokenId)
      .executeTakeFirstOrThrow();
    if (Number(n) >= max) {
      throw new DomainError('too_many_streams', `This token already has ${max} open streams (at most ${max}); close one first.`);
    }
    const row = await trx
      .insertInto('charger_streams')
      .values({ token_id: tokenId, expires_at: sql<Date>`now() + make_interval(secs => ${ttl})` })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  });
}

/** Renews the slots of this process's open streams (one statement for all of them). */
export async function renewStreamSlots(deps: Deps, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const ttl = slotTtlSeconds(deps.config.STREAM_KEEPALIVE_SECONDS);
  await deps.db
    .updateTable('charger_streams')
    .set({ expires_at: sql<Date>`now() + make_interval(secs => ${ttl})` })
    .where('id', 'in', ids)
    .execute();
  // the slots of processes that died long ago (a token that never opens a stream again keeps no rows)
  await deps.db.deleteFrom('charger_streams').where('expires_at', '<', sql<Date>`now() - interval '1 hour'`).execute();
}

export async function releaseStreamSlot(deps: Deps, id: string): Promise<void> {
  await deps.db.deleteFrom('charger_streams').where('id', '=', id).execute();
}
