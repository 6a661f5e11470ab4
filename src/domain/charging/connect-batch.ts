// The connect path of many chargers at once (a reconnect storm: every charger of a process comes back within
// seconds): the credential lookup of each upgrade, its live-state row, its BootNotification and its
// StatusNotifications, each as one statement for a whole batch instead of one (or seven) per charger. Each
// function gives exactly what its one-charger counterpart gives (charger-auth.ts, live-state.ts, handle-event.ts);
// the batcher (src/lib/micro-batch.ts) never puts one charger twice into a batch.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { resolveCatalogModel, type ResolveResult } from '../catalog/resolve.ts';
import type { ChargerEvent, EventOutcome } from './events.ts';
import { lockLiveRows } from './live-state.ts';
import { isRebootSql } from './sessions.ts';

export type RegistrationStatus = 'Accepted' | 'Pending' | 'Rejected';

export interface ChargerCredentialRow {
  id: string;
  password_hash: string | null;
  pending_password_hash: string | null;
  /** the operator's registration status (a charger without a live-state row yet: Accepted, the column's default) */
  registration: RegistrationStatus;
}

/** The active chargers with these identities, with their password hashes (the upgrade's lookup). */
export async function credentialsByIdentity(db: Db, identities: string[]): Promise<Map<string, ChargerCredentialRow>> {
  const rows = await db
    .selectFrom('chargers')
    .leftJoin('ocpp_chargers as o', 'o.charger_id', 'chargers.id')
    .select(['chargers.id', 'chargers.ocpp_identity', 'chargers.password_hash', 'chargers.pending_password_hash', 'o.registration_status'])
    .where('chargers.ocpp_identity', 'in', [...new Set(identities)])
    .where('chargers.status', '=', 'active')
    .execute();
  return new Map(
    rows.map((r) => [
      r.ocpp_identity!,
      { id: r.id, password_hash: r.password_hash, pending_password_hash: r.pending_password_hash, registration: (r.registration_status ?? 'Accepted') as RegistrationStatus },
    ]),
  );
}

export interface ConnectedItem {
  chargerId: string;
  protocol: string;
  connectionId: string;
  instanceId: string;
  at: Date;
}

/** markConnected for many sockets: the live-state row of each charger created or taken over, one statement. */
export async function markConnectedMany(db: Db, items: ConnectedItem[]): Promise<void> {
  if (items.length === 0) return;
  await sql`
    insert into ocpp_chargers as o (charger_id, connected, protocol, connection_id, instance_id, connected_at, last_seen_at)
    select u.charger_id, true, u.protocol, u.connection_id, u.instance_id, u.at, u.at
      from unnest(${items.map((i) => i.chargerId)}::uuid[], ${items.map((i) => i.protocol)}::text[],
                  ${items.map((i) => i.connectionId)}::text[], ${items.map((i) => i.instanceId)}::text[],
                  ${items.map((i) => i.at)}::timestamptz[]) as u(charger_id, protocol, connection_id, instance_id, at)
     order by u.charger_id -- rows are taken in charger-id order, as lockLiveRows takes them
    on conflict (charger_id) do update
       set connected = true, protocol = excluded.protocol, connection_id = excluded.connection_id,
           instance_id = excluded.instance_id, connected_at = excluded.connected_at,
           last_seen_at = excluded.last_seen_at, updated_at = now()`.execute(db);
}

/**
 * markDisconnected for many closed sockets, one statement: only the connection that still holds its charger clears
 * the state (a newer connection's row is left alone, C4.2).
 */
export async function markDisconnectedMany(db: Db, items: Array<{ chargerId: string; connectionId: string; at: Date }>): Promise<void> {
  if (items.length === 0) return;
  const ids = items.map((i) => i.chargerId);
  await sql`
    with locked as materialized (${lockLiveRows(ids)})
    update ocpp_chargers o set connected = false, disconnected_at = u.at, updated_at = now()
      from locked l, unnest(${ids}::uuid[], ${items.map((i) => i.connectionId)}::text[], ${items.map((i) => i.at)}::timestamptz[])
           as u(charger_id, connection_id, at)
     where o.charger_id = l.charger_id and o.charger_id = u.charger_id and o.connection_id = u.connection_id`.execute(db);
}

export type BootEvent = Extract<ChargerEvent, { kind: 'boot' }>;

/**
 * BootNotification of many chargers (C4.3): the model resolved against the catalog once per distinct
 * vendor/model, then one statement records every boot (charger model, serial and firmware, boot time, answered
 * unless Rejected) and closes the sessions the chargers left open (C4.6), as the one-charger handler does.
 * The chargers' live-state rows exist (the socket's markConnected ran before any of its calls).
 *
 * Each socket's cache gets its charger's maximum power as maxPowerW would read it after the boot (the resolved
 * model's, else `fallbackW`), so the charger's first transaction message does not read it again.
 */
export async function bootMany(
  db: Db,
  items: Array<{ chargerId: string; ev: BootEvent; cache?: { maxPowerW: number | undefined } | undefined }>,
  now: Date,
  intervalSeconds: number,
  fallbackW: number,
): Promise<EventOutcome[]> {
  if (items.length === 0) return [];
  const models = new Map<string, ResolveResult>();
  for (const { ev } of items) {
    const k = JSON.stringify([ev.vendor, ev.model]);
    if (!models.has(k)) models.set(k, await resolveCatalogModel(db, ev.vendor, ev.model));
  }
  const res = items.map(({ ev }) => models.get(JSON.stringify([ev.vendor, ev.model]))!);
  const ids = items.map((i) => i.chargerId);
  const r = await sql<{ charger_id: string; registration_status: string }>`
    with locked as materialized (${lockLiveRows(ids)}), u as (
      select * from unnest(${ids}::uuid[], ${items.map((i) => i.ev.vendor)}::text[], ${items.map((i) => i.ev.model)}::text[],
                           ${res.map((x) => (x.resolved ? x.model.catalog_charger_id : null))}::uuid[],
                           ${res.map((x) => (x.resolved ? x.model.mid_meter : false))}::boolean[],
                           ${items.map((i) => i.ev.serial)}::text[], ${items.map((i) => i.ev.firmware)}::text[],
                           ${items.map((i) => i.ev.reason)}::text[])
        as u(charger_id, vendor, model, catalog_model_id, mid, serial, firmware, reason)
    ), chargers_set as (
      update chargers c set ocpp_vendor = u.vendor, ocpp_model = u.model, catalog_model_id = u.catalog_model_id,
                            mid_certified = u.mid, updated_at = now()
        from u where c.id = u.charger_id
    ), closed as (
      -- C4.6: a rebooted charger's running sessions end provisionally; a triggered boot is no reboot (D134)
      update charging_sessions s set status = 'completed', end_provisional = true,
             ended_at = coalesce(s.last_reading_at, s.started_at), meter_stop_wh = s.last_meter_wh, updated_at = now()
        from u
       where s.charger_id = u.charger_id and s.status = 'active' and ${isRebootSql(sql`u.charger_id`, sql`u.reason`)}
    )
    update ocpp_chargers o set serial_number = u.serial, firmware_version = u.firmware, boot_reason = u.reason,
           boot_at = ${now}, boot_answered_at = case when o.registration_status = 'Rejected' then null else ${now}::timestamptz end,
           updated_at = now()
      from locked l, u where o.charger_id = l.charger_id and o.charger_id = u.charger_id
    returning o.charger_id, o.registration_status`.execute(db);
  const status = new Map(r.rows.map((x) => [x.charger_id, x.registration_status]));
  items.forEach((i, k) => {
    const m = res[k]!;
    if (i.cache) i.cache.maxPowerW = m.resolved ? m.model.max_power_w : fallbackW;
  });
  return items.map((i) => {
    const s = status.get(i.chargerId);
    if (s === undefined) throw new Error(`boot of a charger without a live-state row: ${i.chargerId}`);
    return { kind: 'boot', status: s, intervalSeconds, currentTime: now } as EventOutcome;
  });
}

/** StatusNotification of many chargers (one connector each): each connector's status, one statement. */
export async function recordConnectorStatusMany(db: Db, items: Array<{ chargerId: string; connectorId: number; status: string }>): Promise<void> {
  if (items.length === 0) return;
  const ids = items.map((i) => i.chargerId);
  await sql`
    with locked as materialized (${lockLiveRows(ids)})
    update ocpp_chargers o set connector_status = o.connector_status || jsonb_build_object(u.connector_id::text, u.status)
      from locked l, unnest(${ids}::uuid[], ${items.map((i) => i.connectorId)}::int[], ${items.map((i) => i.status)}::text[])
        as u(charger_id, connector_id, status)
     where o.charger_id = l.charger_id and o.charger_id = u.charger_id`.execute(db);
}
