// JSON logs with pino. Secrets never reach a log line: authorization headers, passwords, client secrets,
// tokens, API keys and IBANs are redacted wherever they appear in a logged object.
import pino, { type Logger } from 'pino';

export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.authorization',
  '*.password',
  '*.client_secret',
  '*.access_token',
  '*.api_key',
  '*.token',
  '*.iban',
  '*.*.iban',
  '*.secret',
  'password',
  'client_secret',
  'iban',
  'token',
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
