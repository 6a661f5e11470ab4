// C0.5: the environment is read once, validated with one zod schema, and frozen.
// A bad value stops the process naming every offending key. .env.example documents every key.
import fs from 'node:fs';
import { isIP } from 'node:net';
import { validate as validCron } from 'node-cron';
import { z } from 'zod';
import { validEmail } from './lib/email.ts';
import { DEMO_OPERATOR } from './lib/operator.ts';
import { tlsFileIssues } from './lib/tls-files.ts';

// An empty value (`PORT=` in a .env file) means "not set", so the default applies instead of 0 or an error.
const emptyAsUnset = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const bool = z.preprocess(
  (v) => (typeof v === 'string' ? emptyAsUnset(v.trim().toLowerCase()) : v),
  z.enum(['true', 'false', '1', '0', 'yes', 'no']).optional(),
);
const boolDefault = (def: boolean) => bool.transform((v) => (v === undefined ? def : v === 'true' || v === '1' || v === 'yes'));
// D191: one message for every way a number is wrong (`PORT=abc` said "expected number, received NaN")
const int = (def: number, min = 0, max = Number.MAX_SAFE_INTEGER) => {
  const error = `must be a whole number ${min}–${max === Number.MAX_SAFE_INTEGER ? 'or more' : max}`.replace(/–or more$/, ' or more');
  return z
    .preprocess(emptyAsUnset, z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error }).optional())
    .transform((v) => v ?? def);
};
// D151: every number has an upper bound. Node's timers and PostgreSQL's statement_timeout hold a signed 32-bit count
// of milliseconds: a larger value overflowed into a 1 ms timer (a keep-alive of 3,000,000 s wrote every millisecond).
const MAX_TIMER_MS = 2 ** 31 - 1;
/** a duration in seconds: at most a day (every one of them is a timeout or an interval, some used ×3) */
const seconds = (def: number, min = 1) => int(def, min, 86_400);
/** a duration in days (link lifetimes, retention, review delays): at most ten years */
const days = (def: number, min = 1, max = 3650) => int(def, min, max);
/** a count of things (requests per minute, connections, bytes of a body): sane, and far below 2^31 */
const count = (def: number, min = 1, max = 10_000_000) => int(def, min, max);
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

// renewable_share per compliance year, e.g. "2026:0.505,2027:0.52" (C5.1)
// D151: a share is a fraction of the electricity, 0 to 1 (2026:5 was accepted and multiplied every ERE by five)
const yearMap = z.string().transform((raw, ctx) => {
  const out: Record<number, string> = {};
  for (const part of raw.split(',').map((p) => p.trim()).filter(Boolean)) {
    const m = /^(\d{4})\s*:\s*(\d+(?:\.\d+)?)$/.exec(part);
    if (!m || Number(m[2]) > 1) {
      ctx.addIssue({ code: 'custom', message: `expected YEAR:SHARE pairs with a share from 0 to 1, got "${part}"` });
      return z.NEVER;
    }
    out[Number(m[1])] = m[2]!;
  }
  return out;
});

// A cron expression for node-cron (5 or 6 fields); checked here so a typo stops the start, not a job later.
const cron = (def: string) => z.string().trim().refine((v) => validCron(v), 'must be a cron expression').default(def);

// C1.5 TRUST_PROXY: unset/false = trust nobody (the socket's address is the client IP); an integer = that many
// proxy hops; otherwise a comma-separated list of proxy addresses or CIDRs (fastify's trustProxy forms; also
// proxy-addr's names loopback, linklocal, uniquelocal).
// `true` (trust every X-Forwarded-For) is refused: any client could then choose its own IP.
const trustProxy = z
  .string()
  .optional()
  .transform((raw, ctx): false | number | string[] => {
    const v = (raw ?? '').trim();
    if (v === '' || /^(false|no|0)$/i.test(v)) return false;
    if (/^\d+$/.test(v)) return Number(v);
    const parts = v.split(',').map((p) => p.trim()).filter(Boolean);
    const bad = parts.filter((p) => !isProxyAddress(p));
    if (/^(true|yes|all|\*)$/i.test(v) || bad.length || !parts.length) {
      ctx.addIssue({
        code: 'custom',
        message: `expected false, a hop count (e.g. 1) or a comma-separated list of proxy addresses/CIDRs (e.g. 10.0.0.1,192.168.0.0/16); "true" (trust everyone) is not accepted${bad.length ? `; not an address or CIDR: ${bad.join(', ')}` : ''}`,
      });
      return z.NEVER;
    }
    return parts;
  });

function isProxyAddress(p: string): boolean {
  if (/^(loopback|linklocal|uniquelocal)$/.test(p)) return true; // proxy-addr's named ranges
  const m = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(p);
  if (!m) return false;
  const family = isIP(m[1]!);
  if (!family) return false;
  return m[2] === undefined || Number(m[2]) <= (family === 4 ? 32 : 128);
}

const decimalString = z.string().regex(/^\d+(\.\d+)?$/, 'expected a decimal number');
/** a decimal number from min to max (D151: ERE_FEE_PCT=150 was accepted and shown to owners) */
const decimalIn = (def: string, min: number, max: number) =>
  decimalString.refine((v) => Number(v) >= min && Number(v) <= max, `must be from ${min} to ${max}`).default(def);

// D151: a URL the service hands out or calls is http(s); z.url() alone took ftp://, mailto: and
// `ere.example.nl:8080` (read as the scheme `ere.example.nl:`), and every link and the OCPP endpoint lost their scheme
const httpUrl = optionalString.pipe(
  z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
);
const smtpUrl = optionalString.pipe(
  z.url({ protocol: /^smtps?$/, error: 'must be an smtp:// or smtps:// URL (smtp://user:pass@host:587)' }).optional(),
);
// D174: the sender of every e-mail, `Name <address>` or an address: `SMTP_FROM='ERE Gateway'` started and sent mail
// with an empty envelope sender and no From: header
const FROM = /^\s*(?:(?:"[^"\r\n]*"|[^<>"\r\n]*?)\s*<([^<>\s]+)>|([^<>\s"]+))\s*$/;
const smtpFrom = z
  .string()
  .refine((v) => {
    const m = FROM.exec(v);
    return validEmail(m?.[1] ?? m?.[2]) !== null;
  }, "must be an e-mail address, or a name with one in angle brackets ('ERE Gateway <no-reply@example.nl>')")
  .default('ERE Gateway <no-reply@ere-gateway.local>');
// HOST: an IP address or a host name (whether the name resolves is checked at start, before anything is created)
const hostName = /^(?=.{1,253}$)[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;
const host = z
  .string()
  .trim()
  .refine((v) => isIP(v) !== 0 || hostName.test(v), 'must be an IP address or a host name')
  .default('0.0.0.0');

/** the sandbox's operator name; production refuses it (D187) */
export const PLACEHOLDER_OPERATOR_NAME = 'ERE Gateway B.V.';

export const configSchema = z.object({
  APP_ENV: z.enum(['sandbox', 'production']).default('sandbox'),
  NODE_ENV: z.string().optional(),
  // 0 = a port the system picks (tests)
  PORT: int(8080, 0, 65535),
  HOST: host,
  PUBLIC_BASE_URL: httpUrl,
  DATABASE_URL: optionalString.pipe(
    z.string().regex(/^postgres(ql)?:\/\//, 'must start with postgres:// or postgresql://').optional(),
  ),
  DATA_DIR: optionalString,
  DATA_ENCRYPTION_KEY: optionalString.pipe(
    z
      .string()
      .refine((v) => Buffer.from(v, 'base64').length === 32, 'must be 32 bytes, base64 encoded')
      .optional(),
  ),
  // D251: older data keys that only decrypt (a rotation, docs/platform.md): comma-separated, each 32 bytes base64.
  // The message names the entry by its place, never its value.
  DATA_ENCRYPTION_KEYS_PREVIOUS: optionalString.pipe(
    z
      .string()
      .superRefine((v, ctx) => {
        const entries = v.split(',').map((s) => s.trim());
        const bad = entries.findIndex((s) => Buffer.from(s, 'base64').length !== 32);
        if (bad >= 0) {
          const which = entries.length > 1 ? `entry ${bad + 1} of ${entries.length} ` : '';
          ctx.addIssue({ code: 'custom', message: `${which}must be 32 bytes, base64 encoded (comma-separated keys)` });
        }
      })
      .optional(),
  ),
  ADMIN_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  HTTP_MAX_BODY_BYTES: count(1_048_576, 1024, 1024 ** 3),
  // C1.5: whose X-Forwarded-For to believe: a hop count or proxy addresses/CIDRs, never everyone
  TRUST_PROXY: trustProxy,
  // C4.12: at most this many connections per process that are not (yet) WebSockets; more are closed at once
  HTTP_MAX_CONNECTIONS: count(10_000),
  // connections the kernel completes and queues for the process to accept (listen backlog; Linux caps it at
  // net.core.somaxconn): a reconnect storm of a whole fleet must not overflow it (D67)
  LISTEN_BACKLOG: count(4096, 1, 1_000_000),

  // C1.5 rate limits per credential, per minute
  RATE_LIMIT_CPO_PER_MIN: count(600),
  RATE_LIMIT_PARTNER_PER_MIN: count(120),
  RATE_LIMIT_PERSONAL_PER_MIN: count(120),
  RATE_LIMIT_TOKEN_PER_MIN: count(30),
  RATE_LIMIT_WINDOW_SECONDS: seconds(60),
  // requests without a credential (public pages, the token endpoint without client_id), per client IP
  RATE_LIMIT_PUBLIC_PER_MIN: count(300),
  RATE_LIMIT_CLEANUP_CRON: cron('*/10 * * * *'),
  // C1.5: POST /oauth/token per client IP as well (invented client ids get no fresh buckets)
  RATE_LIMIT_TOKEN_IP_PER_MIN: count(120),
  // C1.5: failed /admin authentications per client IP
  RATE_LIMIT_ADMIN_FAIL_PER_MIN: count(10),
  // GET /metrics requires `Authorization: Bearer <METRICS_TOKEN>` when set
  METRICS_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
  // C4.12 HTTP bounds: a stalled request or handshake is closed within requestTimeout + the 5 s check
  HTTP_REQUEST_TIMEOUT_SECONDS: seconds(30),
  HTTP_HEADERS_TIMEOUT_SECONDS: seconds(10),
  HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: seconds(72),
  // C4.12: PostgreSQL statement_timeout of every connection (0 = none)
  DB_STATEMENT_TIMEOUT_MS: int(30_000, 0, MAX_TIMER_MS),
  // D82: the ingest batch statements as named prepared statements (false behind a pooler that cannot keep them)
  DB_PREPARED_STATEMENTS: boolDefault(true),
  // D244: connections of the process's database pool (the event bus's listening connection is one more). At least 5:
  // a job holds its advisory lock on one connection while its work takes another, and at the top of the hour up to
  // four jobs start at once (rate limits, energy, drafts, outbox); as many held locks as connections stall them all
  DB_POOL_SIZE: int(10, 5, 1000),
  // C4.12: retention of quarantined OCPP messages, and the job that deletes older ones
  QUARANTINE_RETENTION_DAYS: days(90),
  RETENTION_CRON: cron('30 2 * * *'),
  // admin CLI (npm run admin): base URL of the admin API; defaults to PUBLIC_BASE_URL
  ADMIN_URL: httpUrl,

  // C2: onboarding
  OPERATOR_NAME: z.string().min(1).default(PLACEHOLDER_OPERATOR_NAME),
  // C7.3 the operator's identity in every page and e-mail footer; unset: demo values in sandbox (src/lib/operator.ts),
  // left out in production
  OPERATOR_ADDRESS: optionalString,
  OPERATOR_KVK: optionalString.pipe(z.string().regex(/^\d{8}$/, 'must be the 8-digit KvK number').optional()),
  OPERATOR_SUPPORT_EMAIL: optionalString.pipe(z.email().optional()),
  OPERATOR_PRIVACY_URL: httpUrl,
  MANDATE_LINK_TTL_DAYS: days(30, 1, 365),
  EAN_REGISTER_URL: httpUrl,
  EAN_REGISTER_TOKEN: optionalString,
  EAN_RECHECK_CRON: cron('0 3 * * 1'),

  // C4: OCPP
  HEARTBEAT_INTERVAL_SECONDS: seconds(300),
  OCPP_MAX_FRAME_BYTES: count(262_144, 1024, 1024 ** 3),
  OCPP_DEFAULT_PROTOCOL: z.enum(['ocpp1.6', 'ocpp2.0.1', 'refuse']).default('ocpp1.6'),
  OCPP_CALL_TIMEOUT_SECONDS: seconds(30),
  // WebSocket ping to a charger that has been silent this long (a socket that sends messages is not pinged)
  OCPP_PING_INTERVAL_SECONDS: seconds(60, 5),
  OCPP_MAX_POWER_W: count(22_000),
  TLS_CERT_FILE: optionalString,
  TLS_KEY_FILE: optionalString,
  // OCPP Security Profile 3: chargers present a client certificate signed by this CA, CN = identity
  TLS_CLIENT_CA_FILE: optionalString,
  // D261: how often the TLS files are looked at for a renewed certificate (SIGHUP reloads at once)
  TLS_RELOAD_CHECK_SECONDS: count(60, 1, 86_400),
  // C4.12 bounded resources per process
  OCPP_MAX_CONNECTIONS: count(25_000),
  OCPP_MAX_PENDING_CALLS: count(16, 1, 10_000),
  OCPP_HANDSHAKE_TIMEOUT_SECONDS: seconds(10),
  // D156: bytes of unusable messages a charger may have kept in the quarantine per rolling 24 hours; past it they are
  // refused (CALLERROR InternalError) instead of acknowledged. 64 MiB: a broken charger sending a 5 KB frame every
  // 10 s keeps 43 MB a day
  OCPP_QUARANTINE_BYTES_PER_DAY: int(67_108_864, 1024, 1024 ** 4),
  // D157: messages a socket sends past its bound (calls answered busy, frames that are not OCPP), a token bucket: this
  // many a second sustained, bursts up to OCPP_MESSAGE_BURST; beyond it the socket is closed with 1008
  OCPP_MESSAGES_PER_SECOND: int(20, 1, 1_000_000),
  OCPP_MESSAGE_BURST: int(100, 1, 1_000_000),
  // C4.8: a process renews its lease this often; its chargers are offline once it lapses (3 renewals missed)
  INSTANCE_LEASE_SECONDS: seconds(30, 3),
  // Fleet-scale ingest: transaction messages of all sockets are written in batches (group commit), flushed when
  // INGEST_BATCH_MAX messages are waiting or INGEST_FLUSH_MS after the first one arrived; 0 = no batching (each
  // message in its own transaction). 20 ms: at a steady fleet rate (a few hundred messages a second) a batch holds
  // about six messages instead of two, a third of the statements and of the gateway's CPU per message, for up to
  // 20 ms more before a charger's answer (D59)
  INGEST_BATCH_MAX: count(256, 0, 100_000),
  INGEST_FLUSH_MS: int(20, 0, 60_000),
  // batches in flight at once, each on its own pooled connection; readings of a remembered session have one slot
  // more of their own. 2: on two cores shared with PostgreSQL a third statement at once added contention, not
  // throughput (D87); a database far away (milliseconds per round trip) may want more. At most 6 of the pool's
  // DB_POOL_SIZE (10) connections, so that the connect path, HTTP and the jobs keep theirs
  INGEST_BATCHES_IN_FLIGHT: int(2, 1, 6),
  // processes sharing the listening port (node:cluster): a number, or `auto` = one per core; PostgreSQL only
  WORKERS: z
    .string()
    .trim()
    .regex(/^(auto|[1-9]\d{0,2})$/, 'must be a number of processes (1-999) or auto')
    .default('1'),
  // meter_readings is partitioned by month; the `partitions` job keeps this many months ahead created
  PARTITION_AHEAD_MONTHS: count(3, 1, 120),
  PARTITION_CRON: cron('15 1 * * *'),
  // C7.1 GET /chargers/stream: open streams per personal token (held across processes), and the keep-alive comment
  STREAM_MAX_PER_TOKEN: count(5, 1, 10_000),
  STREAM_KEEPALIVE_SECONDS: seconds(15),

  // C4.7, C5: energy and ERE
  ENERGY_AGGREGATE_CRON: cron('*/15 * * * *'),
  ERE_REVIEW_CRON: cron('0 4 * * *'),
  ERE_REVIEW_DAYS: days(14, 0, 365),
  RENEWABLE_SHARE: yearMap.default({ 2026: '0.505' }),
  ERE_INDICATIVE_PRICE_EUR: decimalIn('0.140', 0, 1000),
  ERE_FEE_PCT: decimalIn('15', 0, 100),
  // C5.5: what one household connection can deliver (3 × 25 A ≈ 17.3 kW); a month above this × its hours is held
  CONNECTION_MAX_KW: decimalIn('17.3', 0.001, 100_000),

  // C3: partner API and invites
  SMTP_URL: smtpUrl,
  SMTP_FROM: smtpFrom,
  PARTNER_ROLLING_DAYS: days(30),
  PARTNER_ROLLING_CAP: count(5000, 0, 1_000_000_000),
  // C3.3 deferred EAN lookups of CSV drafts; C3.5 outbox delivery (only sends when SMTP_URL is set)
  DRAFT_EAN_LOOKUP_CRON: cron('*/5 * * * *'),
  OUTBOX_DELIVER_CRON: cron('* * * * *'),
  JOBS_ENABLED: boolDefault(true),
});

export type Config = Readonly<
  Omit<z.output<typeof configSchema>, 'PUBLIC_BASE_URL' | 'DATA_DIR'> & {
    PUBLIC_BASE_URL: string;
    DATA_DIR: string;
  }
>;

export class ConfigError extends Error {
  constructor(public readonly issues: { key: string; message: string }[]) {
    super(
      'Invalid configuration:\n' + issues.map((i) => `  ${i.key}: ${i.message}`).join('\n'),
    );
  }
}

/** Parse an environment (process.env by default). Throws ConfigError naming every bad key. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = configSchema.safeParse(env);
  const issues = parsed.success
    ? []
    : parsed.error.issues.map((i) => ({ key: String(i.path[0] ?? '(root)'), message: i.message }));
  // C0.6: production never generates a key of its own, so a missing key stops the start with the rest.
  const appEnv = parsed.success ? parsed.data.APP_ENV : env.APP_ENV;
  if (appEnv === 'production' && !env.DATA_ENCRYPTION_KEY?.trim()) {
    issues.push({ key: 'DATA_ENCRYPTION_KEY', message: 'required in production (32 bytes, base64)' });
  }
  // D187 (C7.3): production names the real operator on every page, e-mail and mandate clause; through Docker the
  // placeholder "ERE Gateway B.V." was the authorized party of real customers' mandates. Unset or a placeholder: refused.
  if (appEnv === 'production') {
    const placeholders: Record<string, string> = {
      OPERATOR_NAME: PLACEHOLDER_OPERATOR_NAME,
      OPERATOR_ADDRESS: DEMO_OPERATOR.address,
      OPERATOR_KVK: DEMO_OPERATOR.kvk,
      OPERATOR_SUPPORT_EMAIL: DEMO_OPERATOR.supportEmail,
      OPERATOR_PRIVACY_URL: DEMO_OPERATOR.privacyUrl,
    };
    const missing = Object.keys(placeholders).filter((k) => !env[k]?.trim() || env[k]!.trim() === placeholders[k]);
    if (missing.length) {
      issues.push({
        key: missing.join(', '),
        message: 'required in production, the operator named on every page, e-mail and mandate clause (C7.3); unset or the placeholder of .env.example',
      });
    }
  }
  // TLS on the service port (OCPP Security Profile 2 without a proxy): both files or neither, and readable.
  const tls = { TLS_CERT_FILE: env.TLS_CERT_FILE?.trim(), TLS_KEY_FILE: env.TLS_KEY_FILE?.trim() };
  if (Boolean(tls.TLS_CERT_FILE) !== Boolean(tls.TLS_KEY_FILE)) {
    const missing = tls.TLS_CERT_FILE ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE';
    issues.push({ key: missing, message: 'TLS_CERT_FILE and TLS_KEY_FILE are set together' });
  }
  for (const [key, file] of Object.entries(tls)) {
    if (file && !fs.existsSync(file)) issues.push({ key, message: `file not found: ${file}` });
  }
  // D189: a file that exists but is not a PEM certificate/key (or a key of another certificate) crashed the start with
  // OpenSSL's stack after the data dir and key were made; checked here, before anything is created
  // Security Profile 3: client certificates are checked by our own TLS listener, so it needs TLS on the port.
  const clientCa = env.TLS_CLIENT_CA_FILE?.trim();
  if (clientCa && !(tls.TLS_CERT_FILE && tls.TLS_KEY_FILE)) {
    issues.push({ key: 'TLS_CLIENT_CA_FILE', message: 'needs TLS_CERT_FILE and TLS_KEY_FILE (client certificates are checked on the service port)' });
  } else if (clientCa && !fs.existsSync(clientCa)) {
    issues.push({ key: 'TLS_CLIENT_CA_FILE', message: `file not found: ${clientCa}` });
  }
  if (tls.TLS_CERT_FILE && tls.TLS_KEY_FILE && !issues.some((i) => i.key.startsWith('TLS_'))) issues.push(...tlsFileIssues(tls.TLS_CERT_FILE, tls.TLS_KEY_FILE, clientCa));
  // embedded PGlite lives inside one process: several processes need a PostgreSQL server they can share
  const workers = env.WORKERS?.trim();
  if (workers && workers !== '1' && !env.DATABASE_URL?.trim()) {
    issues.push({ key: 'WORKERS', message: 'several processes need PostgreSQL (set DATABASE_URL); embedded PGlite runs in one process, so leave WORKERS at 1' });
  }
  if (!parsed.success || issues.length) throw new ConfigError(issues);
  const c = parsed.data;
  const cfg: Config = {
    ...c,
    PUBLIC_BASE_URL: (c.PUBLIC_BASE_URL ?? `${c.TLS_CERT_FILE ? 'https' : 'http'}://localhost:${c.PORT}`).replace(/\/+$/, ''),
    DATA_DIR: c.DATA_DIR ?? `./data/${c.APP_ENV}`,
  };
  return Object.freeze(cfg);
}
