// Finding the connection a CPO request addresses (spec §4.1 connections:update, C2.2 mandate links):
// connection_id, account_id (single active connection) or cpo_external_ref, within the caller's partner (C2.1).
import type { Deps } from '../../deps.ts';
import type { Db } from '../../db/database.ts';
import type { ConnectionsTable } from '../../db/tables/core.ts';
import type { Selectable } from 'kysely';
import { DomainError } from '../errors.ts';
import { isUuid } from '../accounts/format.ts';
import { normaliseExternalRef } from '../accounts/external-ref.ts';

export interface TargetInput {
  connection_id?: unknown;
  account_id?: unknown;
  cpo_external_ref?: unknown;
}

export type ConnectionRow = Selectable<ConnectionsTable> & { partner_id: string | null };

const present = (v: unknown) => v !== undefined && v !== null && !(typeof v === 'string' && v.trim() === '');

export function hasTarget(t: TargetInput): boolean {
  return present(t.connection_id) || present(t.account_id) || present(t.cpo_external_ref);
}

export function assertTarget(t: TargetInput): void {
  if (!hasTarget(t)) {
    throw new DomainError('target_required', 'Name the connection: connection_id, account_id or cpo_external_ref.');
  }
}

const notFound = () => new DomainError('connection_not_found', 'No such connection for this partner.');

function connectionsOfPartner(db: Db, partnerId: string) {
  return db
    .selectFrom('connections')
    .innerJoin('accounts', 'accounts.id', 'connections.account_id')
    .selectAll('connections')
    .select('accounts.partner_id')
    .where('accounts.partner_id', '=', partnerId)
    .where('accounts.access_channel', '=', 'cpo_api');
}

/** One connection, or 404 connection_not_found / 409 ambiguous_connection. Archived ones are returned. */
export async function findTargetConnection(deps: Deps, partnerId: string, t: TargetInput): Promise<ConnectionRow> {
  assertTarget(t);
  const q = connectionsOfPartner(deps.db, partnerId);
  if (present(t.connection_id)) {
    if (!isUuid(t.connection_id)) throw notFound();
    const row = await q.where('connections.id', '=', t.connection_id).executeTakeFirst();
    if (!row) throw notFound();
    return row;
  }
  let rows: ConnectionRow[];
  if (present(t.account_id)) {
    if (!isUuid(t.account_id)) throw notFound();
    rows = await q.where('connections.account_id', '=', t.account_id).orderBy('connections.created_at').execute();
  } else {
    if (typeof t.cpo_external_ref !== 'string') throw notFound();
    rows = await q.where('accounts.cpo_external_ref', '=', normaliseExternalRef(t.cpo_external_ref)).orderBy('connections.created_at').execute();
  }
  if (rows.length === 0) throw notFound();
  const active = rows.filter((r) => r.status === 'active');
  if (active.length > 1) {
    throw new DomainError('ambiguous_connection', 'The account has several active connections; send connection_id.');
  }
  // an account whose only connection is archived: that connection (the caller then gets connection_not_active)
  return active[0] ?? rows[rows.length - 1]!;
}

export function assertActive(c: ConnectionRow): void {
  if (c.status !== 'active') {
    throw new DomainError('connection_not_active', 'The connection is archived and can no longer be changed.');
  }
}
