// D155: a database that cannot answer right now is a 503 with Retry-After, not a 500. These are the failures that
// say nothing about the request or about a bug: the statement ran past DB_STATEMENT_TIMEOUT_MS (a lock held, an
// overloaded server), the server shut the connection (restart, pg_terminate_backend, failover), no connection could
// be had. A retry a few seconds later may well succeed, and the client should know it may retry. Deadlocks,
// serialization failures and every other database error stay 500s (the request's own transaction, or a bug).
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The SQLSTATEs: query_canceled (statement_timeout), admin/crash shutdown, cannot connect now, too many connections. */
const UNAVAILABLE_CODES = new Set(['57014', '57P01', '57P02', '57P03', '53300']);
/** Node's socket errors on the connection to the server (the outbound HTTP adapters handle their own). */
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET']);
/** node-postgres names a lost or unobtainable connection by message only. */
const UNAVAILABLE_MESSAGE =
  /^(Connection terminated|Connection ended unexpectedly|timeout exceeded when trying to connect|Client has encountered a connection error)/i;

/** Seconds a client is asked to wait (Retry-After) before it tries again. */
export const DB_RETRY_AFTER_SECONDS = 5;

function unavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || /^08[0-9A-Z]{3}$/.test(code) || UNAVAILABLE_NODE_CODES.has(code))) return true;
  return UNAVAILABLE_MESSAGE.test(err.message);
}

/** err, or the error it wraps (`cause`, AggregateError's `errors`), when it says the database is unavailable or too slow. */
export function databaseUnavailableError(err: unknown, depth = 0): Error | undefined {
  if (depth > 5 || !(err instanceof Error)) return undefined;
  if (unavailable(err)) return err;
  const inner = [(err as { cause?: unknown }).cause, ...(err instanceof AggregateError ? err.errors : [])];
  for (const e of inner) {
    const found = databaseUnavailableError(e, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The answer: 503 service_unavailable with Retry-After, logged at warn (the operator's alert is the database's). */
export function answerDatabaseUnavailable(req: FastifyRequest, reply: FastifyReply, err: Error): FastifyReply {
  req.log.warn({ code: (err as { code?: unknown }).code, reason: err.message.slice(0, 200) }, 'database unavailable; answered 503');
  return reply
    .code(503)
    .header('retry-after', String(DB_RETRY_AFTER_SECONDS))
    .send({ error: 'service_unavailable', detail: `The database is unavailable or too slow right now; retry in ${DB_RETRY_AFTER_SECONDS} seconds (request ${req.id}).` });
}
