// The connectors of a user's chargers as their last StatusNotification left them (ocpp_chargers.connector_status),
// so the dashboard offers a start per connector (C7.2, issue 14 item 3). Connector 0 is the whole charger: not one to
// start, but its status is the station's (a fault of the whole charger, D137), returned apart.
import type { Deps } from '../../deps.ts';

export interface ConnectorView {
  id: number;
  /** the OCPP status word (Available, Preparing, Charging, …); null when the charger never sent one */
  status: string | null;
}

/** A status in which a start can make sense (the charger decides; these only hide pointless buttons). */
export const STARTABLE = new Set(['Available', 'Preparing', 'Occupied', 'Finishing', 'SuspendedEV', 'SuspendedEVSE', 'Reserved']);

/** D137: a status of the whole charger (connector 0) in which nothing can be started on any of its connectors. */
export const STATION_DOWN = new Set(['Faulted', 'Unavailable']);

/**
 * Per charger of `chargerIds` (already known to be the user's), its connectors in order (connector 1 when unknown),
 * and in `stations` the status of the whole charger where it sent one (connector 0).
 */
export async function connectorsOf(deps: Deps, chargerIds: string[], stations?: Map<string, string>): Promise<Map<string, ConnectorView[]>> {
  const out = new Map<string, ConnectorView[]>(chargerIds.map((id) => [id, [{ id: 1, status: null }]]));
  if (chargerIds.length === 0) return out;
  const rows = await deps.db
    .selectFrom('ocpp_chargers')
    .select(['charger_id', 'connector_status'])
    .where('charger_id', 'in', chargerIds)
    .execute();
  for (const r of rows) {
    const whole = (r.connector_status as Record<string, unknown> | null)?.['0'];
    if (stations && typeof whole === 'string') stations.set(r.charger_id, whole);
    const list = Object.entries(r.connector_status ?? {})
      .map(([k, v]) => ({ id: Number(k), status: typeof v === 'string' ? v : null }))
      .filter((c) => Number.isSafeInteger(c.id) && c.id >= 1 && c.id <= 99)
      .sort((x, y) => x.id - y.id);
    if (list.length) out.set(r.charger_id, list);
  }
  return out;
}
