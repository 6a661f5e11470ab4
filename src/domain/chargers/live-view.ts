// C4.8 what the live-state rows say about a charger's socket: online = socket open, its process still holds an
// unexpired lease (src/domain/charging/instances.ts), and a message seen within 2 heartbeat intervals. Read by the
// charger views and the operator's commands; the rows are written by the OCPP edge (charging/live-state.ts).
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';

export interface LiveFacts {
  connected: boolean;
  last_seen_at: Date | null;
  /** the process named in the row holds an unexpired lease (holderAlive) */
  holder_alive: boolean;
}

/**
 * C4.8: true when the process holding the charger's socket (ocpp_chargers.instance_id) still holds an unexpired
 * lease; a column of any query that has ocpp_chargers in scope, so a list needs no lookup per charger.
 */
export function holderAlive() {
  return sql<boolean>`exists (select 1 from ocpp_instances i where i.id = ocpp_chargers.instance_id and i.expires_at > now())`.as('holder_alive');
}

/** The live-state row of one charger with its holder's lease (undefined: never connected). */
export async function liveStateOf(deps: Deps, chargerId: string) {
  return deps.db
    .selectFrom('ocpp_chargers')
    .selectAll('ocpp_chargers')
    .select(holderAlive())
    .where('charger_id', '=', chargerId)
    .executeTakeFirst();
}

export function isOnline(deps: Deps, s: LiveFacts | undefined): boolean {
  if (!s || !s.connected || !s.holder_alive || !s.last_seen_at) return false;
  return deps.clock().getTime() - s.last_seen_at.getTime() <= 2 * deps.config.HEARTBEAT_INTERVAL_SECONDS * 1000;
}
