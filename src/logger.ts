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

export function createLogger(opts: { level: string; destination?: pino.DestinationStream }): Logger {
  return pino(
    {
      level: opts.level,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      base: { service: 'ere-gateway' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    opts.destination,
  );
}
