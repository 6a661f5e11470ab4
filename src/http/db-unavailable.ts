// D155: a database that cannot answer right now is a 503 with Retry-After, not a 500. These are the failures that
// say nothing about the request or about a bug: the statement ran past DB_STATEMENT_TIMEOUT_MS (a lock held, an
// overloaded server), the server shut the connection (restart, pg_terminate_backend, failover), no connection could
// be had. A retry a few seconds later may well succeed, and the client should know it may retry. Deadlocks,
// serialization failures and every other database error stay 500s (the request's own transaction, or a bug).
// D267: during an outage every request met it and wrote its own line (the 503 here, and on the authentication path
// "credential lookup failed" at error with the pg-pool stack, "admin failure counter unavailable" with its stack):
// 1.34 MB in a 3-minute outage at 2 requests a second, growing with traffic. These lines now go through D222's throttle
// (one a minute per event and process, with a count of the rest), at warn, with the error's code and message and no
// stack (every occurrence is written at debug with its stack when LOG_LEVEL=debug). An error that is not the
// database being unavailable is a bug and stays an error line of its own, with its stack.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { throttledLog } from '../lib/throttled-log.ts';

/** The SQLSTATEs: query_canceled (statement_timeout), admin/crash shutdown, cannot connect now, too many connections. */
const UNAVAILABLE_CODES = new Set(['57014', '57P01', '57P02', '57P03', '53300']);
/**
 * Node's socket errors on the connection to the server (the outbound HTTP adapters handle their own); ETIMEDOUT: a
 * connection the kernel gave up on (TCP keepalive or retransmissions on a dead network).
 */
const UNAVAILABLE_NODE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT']);
/**
 * node-postgres names a lost or unobtainable connection by message only; "Query read timeout" is its client-side
 * bound on a round trip (`query_timeout`: a server that does not answer at all).
 */
const UNAVAILABLE_MESSAGE =
  /^(Connection terminated|Connection ended unexpectedly|timeout exceeded when trying to connect|Client has encountered a connection error|Query read timeout)/i;

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

/** The loggers of the services (registerAuth adds its deps.logger): the throttle is the service's, whoever logs. */
const serviceLoggers = new WeakSet<Logger>();

export function registerServiceLogger(logger: Logger): void {
  serviceLoggers.add(logger);
}

/**
 * The service's logger behind a request's: a request logger is a pino child of the app's, itself a child of the
 * service's (pino makes a child with Object.create). The throttle must be the service's own (D224: `db.recovered`
 * counts what it kept out of the log), not one per request.
 */
function serviceLoggerOf(req: FastifyRequest): Logger {
  for (let l: unknown = req.log; l && typeof l === 'object'; l = Object.getPrototypeOf(l)) {
    if (serviceLoggers.has(l as Logger)) return l as Logger;
  }
  return req.server.log as Logger;
}

/**
 * D267: a database that is unavailable, met while answering a request: one warn line a minute per event and process
 * (the first with these fields, the interval's end with the count of the rest), carrying the error's code and message
 * but no stack; every occurrence at debug, with the stack, when the level is debug.
 */
export function logDatabaseUnavailable(req: FastifyRequest, event: string, err: Error, msg: string, fields: Record<string, unknown> = {}): void {
  const logger = serviceLoggerOf(req);
  throttledLog(logger).event(
    'warn',
    event,
    { ...fields, reqId: req.id, code: (err as { code?: unknown }).code, reason: err.message.slice(0, 200) },
    msg,
  );
  if (logger.isLevelEnabled('debug')) req.log.debug({ event, err }, msg);
}

/**
 * The answer: 503 service_unavailable with Retry-After, logged at warn once a minute with a count (D267; the
 * operator's alert is the database's: `db_up`).
 */
export function answerDatabaseUnavailable(req: FastifyRequest, reply: FastifyReply, err: Error): FastifyReply {
  logDatabaseUnavailable(req, 'http.db_unavailable', err, 'database unavailable; answered 503', { method: req.method, route: req.routeOptions.url });
  return reply
    .code(503)
    .header('retry-after', String(DB_RETRY_AFTER_SECONDS))
    .send({ error: 'service_unavailable', detail: `The database is unavailable or too slow right now; retry in ${DB_RETRY_AFTER_SECONDS} seconds (request ${req.id}).` });
}
