// JSON logs with pino. Secrets never reach a log line: authorization headers, passwords, client secrets,
// tokens, API keys and IBANs are redacted wherever they appear in a logged object.
import pino, { type Logger } from 'pino';

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
const TOKEN_PATH = /^(\/(?:mandates|claim|unsubscribe)\/)[^/?#]+/;
const TOKEN_QUERY = /([?&](?:token|api_key|access_token|client_secret|password)=)[^&#]*/gi;

export function maskUrl(url: string): string {
  return url.replace(TOKEN_PATH, '$1[redacted]').replace(TOKEN_QUERY, '$1[redacted]');
}

interface LoggedRequest {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

export function createLogger(opts: { level: string; destination?: pino.DestinationStream }): Logger {
  return pino(
    {
      level: opts.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: 'ere-gateway' },
      // replaces fastify's request serializer (a logger instance's own serializers win): same fields, masked URL
      serializers: {
        req: (req: LoggedRequest | undefined) =>
          req && typeof req === 'object' && typeof req.url === 'string'
            ? {
                method: req.method,
                url: maskUrl(req.url),
                host: req.host,
                remoteAddress: req.ip,
                remotePort: req.socket?.remotePort,
              }
            : req,
      },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    opts.destination,
  );
}
