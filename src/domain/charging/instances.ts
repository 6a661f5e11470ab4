// C4.8 process leases in PostgreSQL: a process holds its chargers' sockets only while its lease has not expired.
// Times are the database's (now()): every process shares that clock, and a lease is about real time, not the
// business clock a test may move. The OCPP edge (src/ocpp/instance-lease.ts) renews and judges predecessors.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';

export interface InstanceIdentity {
  id: string;
  host: string;
  pid: number;
}

const expiresIn = (seconds: number) => sql<Date>`now() + make_interval(secs => ${seconds})`;

/**
 * Takes or renews the lease for `seconds`. An upsert, so a row removed meanwhile (a predecessor check that
 * judged wrongly, or a stall long enough for the row to be reaped) comes back: its chargers read online again.
 */
export async function renewLease(deps: Deps, me: InstanceIdentity, seconds: number): Promise<void> {
  await deps.db
    .insertInto('ocpp_instances')
    .values({ id: me.id, host: me.host, pid: me.pid, expires_at: expiresIn(seconds) })
    .onConflict((oc) => oc.column('id').doUpdateSet({ renewed_at: sql`now()`, expires_at: expiresIn(seconds) }))
    .execute();
}

/** A clean stop: the lease is gone, so nothing can count this process's sockets as open any more. */
export async function dropLease(deps: Deps, id: string): Promise<void> {
  await deps.db.deleteFrom('ocpp_instances').where('id', '=', id).execute();
}

/** The other leases registered from this host key (candidates for a predecessor this process replaced). */
export async function leasesOnHost(deps: Deps, host: string, exceptId: string): Promise<Array<{ id: string; pid: number }>> {
  return deps.db.selectFrom('ocpp_instances').select(['id', 'pid']).where('host', '=', host).where('id', '!=', exceptId).execute();
}

/** Ends the leases of processes known to be gone: their chargers read offline at once. */
export async function endLeases(deps: Deps, ids: string[]): Promise<string[]> {
  if (!ids.length) return [];
  await deps.db.deleteFrom('ocpp_instances').where('id', 'in', ids).execute();
  // the chargers those processes held read offline from now: their ids, for the push streams (D163)
  const held = await deps.db.selectFrom('ocpp_chargers').select('charger_id').where('instance_id', 'in', ids).where('connected', '=', true).execute();
  return held.map((r) => r.charger_id);
}

/** Lease rows long expired (processes that died on another host) are only history: remove them. */
export async function pruneLeases(deps: Deps, olderThanSeconds: number): Promise<void> {
  await deps.db.deleteFrom('ocpp_instances').where('expires_at', '<', sql<Date>`now() - make_interval(secs => ${olderThanSeconds})`).execute();
}
