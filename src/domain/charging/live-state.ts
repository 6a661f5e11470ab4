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
 * A message arrived on this connection. Returns false when a newer connection (maybe in another process)
 * has taken the charger over: the caller then closes this older socket (C4.2).
 */
/**
 * last_seen_at for many connections in one statement; returns the charger ids whose row still names the given
 * connection (written). A charger missing from the answer was taken over by a newer connection, elsewhere.
 */
export async function markSeenMany(deps: Deps, seen: Array<{ chargerId: string; connectionId: string; at: Date }>): Promise<Set<string>> {
  if (seen.length === 0) return new Set();
  const r = await sql<{ charger_id: string }>`
    update ocpp_chargers c set last_seen_at = u.at
      from unnest(${seen.map((x) => x.chargerId)}::uuid[], ${seen.map((x) => x.connectionId)}::text[], ${seen.map((x) => x.at)}::timestamptz[])
           as u(charger_id, connection_id, at)
     where c.charger_id = u.charger_id and c.connection_id = u.connection_id
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
  await deps.db
    .updateTable('ocpp_chargers')
    .set({ connected: false, disconnected_at: deps.clock() })
    .where('instance_id', '=', instanceId)
    .where('connected', '=', true)
    .execute();
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
