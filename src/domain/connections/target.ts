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

/** "connection_id and account_id", "connection_id, account_id and cpo_external_ref": the targets a body names. */
export function namedTargets(t: TargetInput): string {
  const names = (['connection_id', 'account_id', 'cpo_external_ref'] as const).filter((k) => present(t[k]));
  return names.length > 1 ? `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}` : (names[0] ?? '');
}

/** D230: targets named together that name different accounts' connections; nothing is changed. */
export const contradictingTargets = (t: TargetInput) =>
  new DomainError('ambiguous_connection', `${namedTargets(t)} name different connections; send one of them, or ones that name the same connection.`);

/** An account's connection: its single active one, or (none active) its latest archived one; several active: 409. */
function singleOf(rows: ConnectionRow[]): ConnectionRow {
  const active = rows.filter((r) => r.status === 'active');
  if (active.length > 1) {
    throw new DomainError('ambiguous_connection', 'The account has several active connections; send connection_id.');
  }
  // an account whose only connection is archived: that connection (the caller then gets connection_not_active)
  return active[0] ?? rows[rows.length - 1]!;
}

/**
 * One connection, or 404 connection_not_found / 409 ambiguous_connection. Archived ones are returned. Each target
 * named must name something of the caller's (else 404); several named must name the same account (D230: else 409
 * ambiguous_connection and nothing changes, rather than one of them silently winning); connection_id then picks the
 * connection, which also settles an account with several active ones.
 */
export async function findTargetConnection(deps: Deps, partnerId: string, t: TargetInput): Promise<ConnectionRow> {
  assertTarget(t);
  const q = connectionsOfPartner(deps.db, partnerId);
  let byId: ConnectionRow | undefined;
  if (present(t.connection_id)) {
    if (!isUuid(t.connection_id)) throw notFound();
    byId = await q.where('connections.id', '=', t.connection_id).executeTakeFirst();
    if (!byId) throw notFound();
  }
  let ofAccount: ConnectionRow[] | undefined;
  if (present(t.account_id)) {
    if (!isUuid(t.account_id)) throw notFound();
    ofAccount = await q.where('connections.account_id', '=', t.account_id).orderBy('connections.created_at').execute();
    if (ofAccount.length === 0) throw notFound();
  }
  let ofRef: ConnectionRow[] | undefined;
  if (present(t.cpo_external_ref)) {
    if (typeof t.cpo_external_ref !== 'string') throw notFound();
    ofRef = await q.where('accounts.cpo_external_ref', '=', normaliseExternalRef(t.cpo_external_ref)).orderBy('connections.created_at').execute();
    if (ofRef.length === 0) throw notFound();
  }
  const accounts = new Set([byId?.account_id, ofAccount?.[0]?.account_id, ofRef?.[0]?.account_id].filter((a) => a !== undefined));
  if (accounts.size > 1) throw contradictingTargets(t);
  return byId ?? singleOf((ofAccount ?? ofRef)!);
}

export function assertActive(c: ConnectionRow): void {
  if (c.status !== 'active') {
    throw new DomainError('connection_not_active', 'The connection is archived and can no longer be changed.');
  }
}
