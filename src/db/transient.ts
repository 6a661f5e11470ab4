// C4.11: a database that fails is not the data's fault. Errors are sorted here into transient ones (retried
// a few times with backoff, then reported as "database unavailable"), ones caused by the data (the message is
// quarantined) and the rest (bugs).

/** SQLSTATEs that say nothing about the data: retrying the whole transaction may succeed (42501: a grant revoked). */
const TRANSIENT_CODES = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available
  '57014', // query_canceled (statement_timeout)
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '23505', // unique_violation: a concurrent writer of the same row; a retry finds it
]);
const TRANSIENT_NODE_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOTFOUND']);
/** node-postgres reports a lost or unobtainable connection by message only */
const TRANSIENT_MESSAGE =
  /Query read timeout|Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|Cannot use a pool after calling end|the database system is (starting up|shutting down|in recovery)/i;

function codeOf(err: unknown): string | undefined {
  const c = (err as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}

/**
 * SQLSTATE classes of the database's own state, never of the values it was given (D104): connection exceptions (08),
 * a read-only transaction on a standby after a failover (25), authorization refused (28: a changed password), a
 * missing database (3D), insufficient resources (53: disk full, out of memory), an object not in the state needed
 * (55: 55000 "not currently accepting connections", 55006 object in use), operator intervention (57), system errors
 * (58: I/O) and internal errors (XX). A message failing on one of these is refused (the charger sends it again),
 * never acknowledged and quarantined as if it were a bug. Not class 54 (program limits): "index row size exceeds
 * the maximum" is a value too large, and a message refused for it would come back for ever.
 */
const TRANSIENT_CLASSES = new Set(['08', '25', '28', '3D', '53', '55', '57', '58', 'XX']);

export function isTransientDbError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = codeOf(err);
  if (code && (TRANSIENT_CODES.has(code) || TRANSIENT_CLASSES.has(code.slice(0, 2)) || code === '42501' || TRANSIENT_NODE_CODES.has(code))) return true;
  return TRANSIENT_MESSAGE.test(err.message);
}

/**
 * An error the database raised because of the values it was given (class 22 data exception, class 23 integrity
 * violation: 22P05 untranslatable character, 22003 numeric out of range, 22021 bad encoding, 23514 check...).
 * A unique violation that survives the retries counts as one too.
 */
export function isDataDbError(err: unknown): boolean {
  const code = codeOf(err);
  return code !== undefined && /^2[23][0-9A-Z]{3}$/.test(code);
}

/** A short, safe description of a database error for the quarantine reason (never sent to a charger). */
export function dbErrorReason(err: unknown): string {
  const code = codeOf(err) ?? 'unknown';
  const msg = err instanceof Error ? err.message.replace(/\u0000/g, '\\u0000').slice(0, 300) : '';
  return `the database refused the data (${code}: ${msg})`;
}

export interface RetryOptions {
  /** attempts in all (default 4: waits of about 0.12, 0.36 and 1.08 s between them) */
  tries?: number;
  baseMs?: number;
  /**
   * D263: no new attempt begins once this long (ms, default RETRY_BUDGET_MS) has passed since the first began. The
   * retries are for blips (a deadlock, a restart); an attempt that already waited out a timeout (the client-side bound
   * of a round trip, DB_STATEMENT_TIMEOUT_MS + 5 s; a connection not had within 10 s) says the database is unreachable
   * or stuck, and three more such waits held a charger's message past its own CALL timeout with no answer at all.
   */
  budgetMs?: number;
  onRetry?: (err: unknown, attempt: number) => void;
}

/** D263: the default time after which a failed attempt is not retried */
export const RETRY_BUDGET_MS = 5_000;

/**
 * Runs fn (a whole transaction: handlers are idempotent by content, so a repeat is safe) and repeats it on a
 * transient error with exponential backoff and jitter. The last error is thrown when the attempts run out.
 * Not itself async: the usual first attempt that succeeds costs one promise, not a suspended frame kept per
 * message while its batch waits (a burst of 10,000 starts holds that many).
 */
export function withTransientRetry<T>(fn: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const startedAt = performance.now();
  let first: Promise<T>;
  try {
    first = fn();
  } catch (err) {
    first = Promise.reject(err);
  }
  return first.catch((err: unknown) => retryAfter(err, fn, opts, startedAt));
}

/** The attempts after the first one (begun at `startedAt`, performance.now()) failed with `err`. */
async function retryAfter<T>(err: unknown, fn: () => Promise<T>, opts: RetryOptions, startedAt: number): Promise<T> {
  const tries = opts.tries ?? 4;
  const base = opts.baseMs ?? 120;
  const budget = opts.budgetMs ?? RETRY_BUDGET_MS;
  for (let attempt = 1; ; attempt++) {
    if (attempt >= tries || !isTransientDbError(err) || performance.now() - startedAt >= budget) throw err;
    opts.onRetry?.(err, attempt);
    const wait = base * 3 ** (attempt - 1) * (0.75 + Math.random() * 0.5);
    await new Promise((r) => setTimeout(r, wait));
    try {
      return await fn();
    } catch (e) {
      err = e;
    }
  }
}
