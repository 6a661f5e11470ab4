// C4.8: this process's lease (src/domain/charging/instances.ts), renewed every third of INSTANCE_LEASE_SECONDS.
// While it is unexpired, the sockets this process holds count as open; a killed process stops renewing, so its
// chargers read offline once the lease lapses. A restart on the same host does better: a lease of this host
// whose process no longer exists is a predecessor that was killed, and is ended at once, before we listen.
import fs from 'node:fs';
import os from 'node:os';
import type { Deps } from '../deps.ts';
import { publishChargerChanges } from '../domain/charging/charger-changes.ts';
import { dbHealth } from '../db/health.ts';
import { throttledLog } from '../lib/throttled-log.ts';
import { dropLease, endLeases, leasesOnHost, pruneLeases, renewLease, type InstanceIdentity } from '../domain/charging/instances.ts';

/** the leases held by this very process (several services can share one process in tests) */
const ownLeases = new Set<string>();

function readOr(file: string, fallback: string, read: (f: string) => string): string {
  try {
    return read(file).trim();
  } catch {
    return fallback;
  }
}

/**
 * Where a pid means the same process: hostname, kernel boot and pid namespace. Two containers that share a
 * hostname have different pid namespaces, so neither ever judges the other's pids; a restarted container gets a
 * new namespace too, and then its predecessor's lease simply lapses.
 */
export function hostKey(): string {
  const boot = readOr('/proc/sys/kernel/random/boot_id', 'no-boot-id', (f) => fs.readFileSync(f, 'utf8'));
  const pidNs = readOr('/proc/self/ns/pid', 'no-pid-ns', fs.readlinkSync);
  return `${os.hostname()}|${boot}|${pidNs}`;
}

/** false only when no process with this pid exists here (EPERM: one exists, owned by someone else) */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

export interface InstanceLease {
  stop(): Promise<void>;
}

export async function startInstanceLease(deps: Deps, instanceId: string): Promise<InstanceLease> {
  const seconds = deps.config.INSTANCE_LEASE_SECONDS;
  const me: InstanceIdentity = { id: instanceId, host: hostKey(), pid: process.pid };
  ownLeases.add(instanceId);
  await renewLease(deps, me, seconds);

  // Predecessors: same host key, and its pid is gone, or is ours but not one of this process's own leases
  // (a container whose service always runs as pid 1 restarted in place).
  const gone = (await leasesOnHost(deps, me.host, me.id))
    .filter((l) => (l.pid === process.pid ? !ownLeases.has(l.id) : !processExists(l.pid)))
    .map((l) => l.id);
  const orphans = await endLeases(deps, gone);
  if (gone.length) deps.logger.info({ instances: gone, chargers: orphans.length }, 'ocpp: ended the leases of processes this host no longer runs');
  // D163: their chargers went offline with this commit; the push streams hear it now, not at their next re-read
  publishChargerChanges(deps, orphans);
  await pruneLeases(deps, 86_400);

  // D224: the renewal is this process's probe of the database (db_up, the db.recovered line); its failure is logged
  // once a minute with a count of the rest (D222's throttle), not at every renewal of the outage
  const health = dbHealth(deps);
  let renewing: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (renewing) return; // a slow database: never two renewals at once
    const started = Date.now();
    renewing = renewLease(deps, me, seconds)
      .then(
        () => health.up(),
        (err: unknown) => {
          throttledLog(deps.logger).event('warn', 'ocpp.lease_renewal_failed', { err }, 'ocpp: lease renewal failed; our chargers read offline once it lapses');
          health.down(started);
        },
      )
      .finally(() => {
        renewing = undefined;
      });
  }, Math.max(500, Math.floor((seconds * 1000) / 3)));
  timer.unref();

  return {
    async stop() {
      clearInterval(timer);
      await renewing;
      ownLeases.delete(instanceId);
      await dropLease(deps, instanceId).catch((err) => deps.logger.warn({ err }, 'ocpp: could not drop the lease'));
    },
  };
}
