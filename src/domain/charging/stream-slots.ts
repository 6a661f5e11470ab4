// C7.1: at most STREAM_MAX_PER_TOKEN open push streams per personal token, counted in PostgreSQL so the cap holds
// across processes (migrations/0059_charger_streams.sql). A slot is taken when a stream opens, given back when it
// ends, and renewed by its process every keep-alive tick; a slot of a killed process lapses after SLOT_TTL_SECONDS.
// A slot's owner is the personal token (or dashboard session) that opened it: when that is revoked, its streams end.
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

/**
 * Of these slots, the ones whose owner no longer opens a stream: a personal token revoked (or gone), a dashboard
 * session signed out, expired (or gone). Their streams end: access ends with the credential, not at the next
 * reconnect (D64).
 */
export async function slotsOfEndedOwners(deps: Deps, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<{ id: string }>`
    select s.id from charger_streams s
     where s.id = any(${ids}::uuid[])
       and not exists (select 1 from personal_tokens t where t.id = s.token_id and t.revoked_at is null)
       and not exists (select 1 from dashboard_sessions d where d.id = s.token_id and d.revoked_at is null and d.expires_at > ${deps.clock()})`.execute(deps.db);
  return rows.map((r) => r.id);
}

/** Bus topic: these slot owners (token or dashboard-session ids) were revoked; their streams end in every process. */
export const STREAM_OWNERS_ENDED = 'stream_owners_ended';

/** Announces revoked slot owners, after the revocation committed. Never throws: the keep-alive tick is the fallback. */
export async function announceEndedOwners(deps: Deps, ownerIds: string[]): Promise<void> {
  if (ownerIds.length === 0 || !deps.bus) return;
  await deps.bus.publish(deps.db, STREAM_OWNERS_ENDED, { ids: ownerIds }).catch((err) => deps.logger.warn({ err }, 'charger stream: could not announce a revocation'));
}

export async function releaseStreamSlot(deps: Deps, id: string): Promise<void> {
  await deps.db.deleteFrom('charger_streams').where('id', '=', id).execute();
}
