// D151: a start that fails on something only the running system can tell (the database is missing or refuses,
// the port is taken, the host name does not resolve, the data dir is held) stops the process with one line that
// names the configuration key to fix and the system's own reason, and exit code 1; never a stack trace.
// Configuration that is wrong on its face is refused earlier, by loadConfig (C0.5), before anything is created.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';

export class StartFailure extends Error {
  constructor(
    /** the configuration key whose value the start could not work with */
    public readonly key: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`ere-gateway cannot start: ${key}: ${detail}`, options);
  }
}

/** The system's reason in one line: the message, else the code (a refused connect to several addresses is an AggregateError without a message). */
export function reasonOf(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown; errors?: unknown[] } | null;
  const message = typeof e?.message === 'string' ? e.message.split('\n')[0]!.trim() : '';
  const code = typeof e?.code === 'string' ? e.code : '';
  if (message && code && !message.includes(code)) return `${message} (${code})`;
  if (message) return message;
  if (code) return code;
  if (Array.isArray(e?.errors) && e.errors.length) return reasonOf(e.errors[0]);
  return String(err);
}

/** HOST must name an address of this machine: a name that does not resolve fails here, before the data dir is made. */
export async function checkHostResolves(host: string): Promise<void> {
  if (isIP(host)) return;
  try {
    await lookup(host);
  } catch (err) {
    throw new StartFailure('HOST', `cannot resolve "${host}": ${reasonOf(err)}`, { cause: err });
  }
}

/**
 * D244: what a connection pooler answers to the startup parameters the service sends on every connection
 * (`statement_timeout`, C4.12, and `options`: jit, isolation, D132/D244). PgBouncer refuses each one its
 * `ignore_startup_parameters` does not list with `unsupported startup parameter: <name>` (08P01), the first it meets.
 */
const POOLER_REFUSED = /unsupported startup parameter/i;

/** The first use of DATABASE_URL failed: the server is unreachable, the database missing, SSL or the login refused. */
export function databaseFailure(err: unknown): StartFailure {
  if (err instanceof StartFailure) return err;
  let detail = `cannot use the database: ${reasonOf(err)}`;
  // D244: the reason alone names a parameter, not what to do about it; still one line
  if ((err as { code?: unknown } | null)?.code === '08P01' && POOLER_REFUSED.test(reasonOf(err))) {
    detail +=
      '; a connection pooler (PgBouncer) refused a setting the service sends when it connects: add ' +
      '`ignore_startup_parameters = statement_timeout, options` to its configuration, and since the pooler then drops ' +
      "them, set them on the service's role: ALTER ROLE <role> SET statement_timeout = '30s'; ALTER ROLE <role> SET " +
      "jit = off; ALTER ROLE <role> SET default_transaction_isolation = 'read committed' (docs/platform.md, \"The database\")";
  }
  return new StartFailure('DATABASE_URL', detail, { cause: err });
}

/** listen() failed: the port is taken or privileged (PORT), or the address is not this machine's (HOST). */
export function listenFailure(err: unknown, host: string, port: number): StartFailure {
  const code = (err as { code?: string } | null)?.code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE') return new StartFailure('PORT', `${where} is already in use by another process`, { cause: err });
  if (code === 'EACCES') return new StartFailure('PORT', `not allowed to listen on ${where} (a port below 1024 needs privileges)`, { cause: err });
  return new StartFailure('HOST', `cannot listen on ${where}: ${reasonOf(err)}`, { cause: err });
}
