// D117: every socket is an open file. A process whose limit on open files is below what its connection caps allow
// (OCPP_MAX_CONNECTIONS + HTTP_MAX_CONNECTIONS) runs out of files before the caps refuse anyone: accept() fails,
// health checks and the database pool with it, and nothing says why. The limit is read at start (Linux:
// /proc/self/limits) and a warning names both figures when the caps exceed it.
import { readFileSync } from 'node:fs';

/** The soft limit on open files of this process, or null where it cannot be read (not Linux, or unlimited). */
export function openFileLimit(limits = () => readFileSync('/proc/self/limits', 'utf8')): number | null {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(limits());
    return m && m[1] !== 'unlimited' ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** Files the service keeps besides its sockets: the database pool, logs, the listening socket, libraries. */
const OTHER_FILES = 200;

/** The warning to log when the caps allow more sockets than the limit on open files leaves room for, else null. */
export function fileLimitWarning(c: { OCPP_MAX_CONNECTIONS: number; HTTP_MAX_CONNECTIONS: number }, limit: number | null): { limit: number; sockets: number } | null {
  if (limit === null) return null;
  const sockets = c.OCPP_MAX_CONNECTIONS + c.HTTP_MAX_CONNECTIONS;
  return sockets + OTHER_FILES > limit ? { limit, sockets } : null;
}
