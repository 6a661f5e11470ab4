// JSON logs with pino. Secrets never reach a log line: authorization headers, passwords, client secrets,
// tokens, API keys and IBANs are redacted wherever they appear in a logged object. C4.10: a log line carries
// at most LOG_STRING_MAX characters per string (charger-supplied text included), whatever the caller logs.
import os from 'node:os';
import pino, { type Logger } from 'pino';
import { capLogValue, capLogString } from './lib/log-cap.ts';

const SECRET_KEYS = [
  'authorization',
  'cookie',
  'password',
  'ocpp_password',
  'client_secret',
  'access_token',
  'api_key',
  'token',
  'secret',
  'iban',
];

/** Each secret key at the top level and up to three levels deep (pino redact paths). */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-admin-token"]',
  ...SECRET_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`, `*.*.*.${k}`]),
];

// Paths whose last segment is a capability (whoever has the link can sign or claim): the token is masked in
// the request line, and so are credential-like query parameters.
// The one-time dashboard sign-in link is one too: opening it (a GET, as mail scanners do) does not use it up.
const TOKEN_PATH = /^(\/(?:mandates|claim|unsubscribe|dashboard\/sign-in)\/)[^/?#]+/;

// D220: a URL that is not the route's exact path (`/claim//T`, `/Claim/T`, `/x/../claim/T`, `/claim;x/T`: all 404)
// carried the token in clear, so masking no longer depends on the route. Every capability the service issues is
// 18 to 32 random bytes in base64url, so any run of 16 or more base64url characters (a percent-escape counts as one)
// is masked wherever it is in the URL, except what is plainly no secret and an operator reads: a UUID (the ids of
// chargers, sessions, accounts), digits alone (an EAN), lowercase words joined by `-` or `_` (a route's own words).
// A random token has one of those shapes with a chance below one in a billion.
const TOKEN_RUN = /(?:[A-Za-z0-9_-]|%[0-9A-Fa-f]{2}){16,}/g;
const READABLE_RUN = /^(?:[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|[0-9]+|[a-z]+(?:[-_][a-z]+)*)$/;
// and the value of a query parameter whose name says it is a credential, whatever its shape (a short code too)
const QUERY_PARAM = /([?&])([^=&#?]*)=([^&#]*)/g;
const SECRET_NAME = /token|secret|passw|pwd|api_?key|auth|confirm|signature|credential|otp|(?:^|[-_.])(?:key|code|sig|pass)$/i;

function secretName(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    // not decodable: judged as written
  }
  return SECRET_NAME.test(decoded);
}

/** D220: masks what looks like a credential anywhere in a URL, whichever route it names (or none). */
function maskTokens(url: string): string {
  const cut = url.indexOf('?');
  const query = cut === -1 ? '' : url.slice(cut).replace(QUERY_PARAM, (all, sep: string, name: string) => (secretName(name) ? `${sep}${name}=[redacted]` : all));
  const masked = (cut === -1 ? url : url.slice(0, cut)) + query;
  return masked.replace(TOKEN_RUN, (run) => (READABLE_RUN.test(run) ? run : '[redacted]'));
}

export function maskUrl(url: string): string {
  return maskTokens(maskRoute(url));
}

function maskRoute(url: string): string {
  const masked = url.replace(TOKEN_PATH, '$1[redacted]');
  // the router decodes the path (`/%6dandates/<token>` reaches the signing page): match the decoded path too, and
  // when only it matches, log the decoded prefix and nothing of the rest of the path
  const cut = url.search(/[?#]/);
  const path = cut === -1 ? url : url.slice(0, cut);
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // not decodable: the router refuses it (400), nothing behind it is a capability
  }
  const m = decoded === path ? null : TOKEN_PATH.exec(decoded);
  return m ? `${m[1]}[redacted]${masked.slice(cut === -1 ? masked.length : masked.search(/[?#]/))}` : masked;
}

interface LoggedRequest {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

export function createLogger(opts: { level: string; destination?: pino.DestinationStream }): Logger {
  const logger = pino(
    {
      level: opts.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      // D221: with WORKERS above 1 each line says which process wrote it (pino's default base, and the service)
      base: { service: 'ere-gateway', pid: process.pid, hostname: os.hostname() },
      // replaces fastify's request serializer (a logger instance's own serializers win): same fields, masked URL
      serializers: {
        req: (req: LoggedRequest | undefined) =>
          req && typeof req === 'object' && typeof req.url === 'string'
            ? capLogValue({
                method: req.method,
                url: maskUrl(req.url),
                host: req.host,
                remoteAddress: req.ip,
                remotePort: req.socket?.remotePort,
              })
            : req,
        // errors arrive here already serialized and capped by formatters.log (a plain object: pino's default
        // error serializer would serialize it again and name its type "Object")
        err: (err: unknown) => (err instanceof Error ? capLogValue(err) : err),
      },
      // C4.10: every logged object (errors serialized here, with message and stack capped), every binding of a
      // child logger and every message argument is capped before it is written
      formatters: {
        log: (obj: Record<string, unknown>) => capLogValue(obj) as Record<string, unknown>,
        bindings: (bindings: pino.Bindings) => capLogValue(bindings) as pino.Bindings,
      },
      hooks: {
        logMethod(args: unknown[], method) {
          const capped = args.map((a) => (typeof a === 'string' ? capLogString(a) : a));
          // logger.error(err) or ({ err }) alone takes err.message as the message: give pino the capped one instead
          const only = capped.length === 1 ? capped[0] : undefined;
          const err = only instanceof Error ? only : (only as { err?: unknown; msg?: unknown } | undefined)?.err;
          if (err instanceof Error && (only === err || (only as { msg?: unknown }).msg === undefined)) capped.push(capLogString(err.message));
          return method.apply(this, capped as Parameters<typeof method>);
        },
      },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    opts.destination,
  );
  // pino applies formatters.bindings to the root's bindings only; a child's bindings are capped here (children of
  // children inherit this method)
  const child = logger.child as unknown as (this: Logger, b: pino.Bindings, o?: pino.ChildLoggerOptions) => Logger;
  logger.child = function (this: Logger, bindings: pino.Bindings, options?: pino.ChildLoggerOptions) {
    return child.call(this, capLogValue(bindings) as pino.Bindings, options);
  } as unknown as Logger['child'];
  return logger;
}
