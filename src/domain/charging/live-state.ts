// C4.8 live state in PostgreSQL: which process holds a charger's socket, and when it last spoke.
// online = socket open (connected, and its process still holds an unexpired lease: instances.ts) AND a message
// seen within 2 heartbeat intervals.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { ensureOcppCharger } from '../chargers/ocpp-charger.ts';

export async function markConnected(
  deps: Deps,
  chargerId: string,
  c: { protocol: string; connectionId: string; instanceId: string },
): Promise<void> {
  const now = deps.clock();
  await ensureOcppCharger(deps.db, chargerId);
  await deps.db
    .updateTable('ocpp_chargers')
    .set({
      connected: true,
      protocol: c.protocol,
      connection_id: c.connectionId,
      instance_id: c.instanceId,
      connected_at: now,
      last_seen_at: now,
      updated_at: sql`now()`,
    })
    .where('charger_id', '=', chargerId)
    .execute();
}

/**
 * Every statement that writes the live-state rows of many chargers takes their locks through this, in charger-id
 * order, before it writes (`with locked as materialized (…)`, joined by the write): two such statements running at
 * once (a reconnect storm's boots, statuses, closes and last-seen writes) then wait for each other at most, never in
 * a cycle. Without it PostgreSQL locked the rows in whatever order each statement's plan visited them, and a storm
 * hit deadlocks (each detected after deadlock_timeout, one second, and the batch redone one charger at a time).
 */
export function lockLiveRows(chargerIds: string[]) {
  return sql`select charger_id from ocpp_chargers where charger_id = any(${chargerIds}::uuid[]) order by charger_id for no key update`;
}

/**
 * A message arrived on this connection. Returns false when a newer connection (maybe in another process)
 * has taken the charger over: the caller then closes this older socket (C4.2).
 */
/**
 * last_seen_at for many connections in one statement; returns the charger ids whose row still names the given
 * connection (written). A charger missing from the answer was taken over by a newer connection, elsewhere.
 */
export async function markSeenMany(deps: Deps, seen: Array<{ chargerId: string; connectionId: string; at: Date }>): Promise<Set<string>> {
  if (seen.length === 0) return new Set();
  const ids = seen.map((x) => x.chargerId);
  const r = await sql<{ charger_id: string }>`
    with locked as materialized (${lockLiveRows(ids)})
    update ocpp_chargers c set last_seen_at = u.at
      from locked l, unnest(${ids}::uuid[], ${seen.map((x) => x.connectionId)}::text[], ${seen.map((x) => x.at)}::timestamptz[])
           as u(charger_id, connection_id, at)
     where c.charger_id = l.charger_id and c.charger_id = u.charger_id and c.connection_id = u.connection_id
    returning c.charger_id`.execute(deps.db);
  return new Set(r.rows.map((x) => x.charger_id));
}

/** The socket closed. Only the connection that still holds the charger clears the state (C4.2). */
export async function markDisconnected(deps: Deps, chargerId: string, connectionId: string, at: Date = deps.clock()): Promise<void> {
  await deps.db
    .updateTable('ocpp_chargers')
    .set({ connected: false, disconnected_at: at, updated_at: sql`now()` })
    .where('charger_id', '=', chargerId)
    .where('connection_id', '=', connectionId)
    .execute();
}

/** A process that stops marks every charger it held as disconnected. */
export async function releaseInstance(deps: Deps, instanceId: string): Promise<void> {
  // many rows: locked in charger-id order like every other multi-row write (lockLiveRows)
  await sql`
    with locked as materialized (
      select charger_id from ocpp_chargers where instance_id = ${instanceId} and connected order by charger_id for no key update
    )
    update ocpp_chargers o set connected = false, disconnected_at = ${deps.clock()}
      from locked l
     where o.charger_id = l.charger_id and o.instance_id = ${instanceId} and o.connected`.execute(deps.db);
}

export async function recordConnectorStatus(deps: Deps, chargerId: string, connectorId: number, status: string): Promise<void> {
  await deps.db
    .updateTable('ocpp_chargers')
    .set({ connector_status: sql`connector_status || jsonb_build_object(${String(connectorId)}::text, ${status}::text)` })
    .where('charger_id', '=', chargerId)
    .execute();
}

/** The connection that holds each charger now (null when none), for the given chargers. */
export async function currentConnections(deps: Deps, chargerIds: string[]): Promise<Map<string, string | null>> {
  const rows = await deps.db.selectFrom('ocpp_chargers').select(['charger_id', 'connection_id']).where('charger_id', 'in', chargerIds).execute();
  return new Map(rows.map((r) => [r.charger_id, r.connection_id]));
}
