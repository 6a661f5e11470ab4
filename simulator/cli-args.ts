// The command line of `npm run simulate`: its options, and the checks that turn a value it cannot use into one line
// and exit code 2 before anything connects (docs/simulator.md). cli.ts runs what they describe.
import fs from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { parse as parseCsv } from 'csv-parse/sync';
import type { Credential } from './register.ts';

/** a value the simulator cannot use: cli.ts prints `simulate: <message>` and "(see --help)", and exits 2 */
export class UsageError extends Error {}

export function fail(msg: string): never {
  throw new UsageError(msg);
}

export function int(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || !Number.isSafeInteger(Number(v))) fail(`--${name} must be a non-negative integer (at most ${Number.MAX_SAFE_INTEGER}), got ${v}`);
  return Number(v);
}

/**
 * a whole number of at least 1 (a power, a duration, an interval, a count: 0 would divide by zero, send energy in no
 * time or time every call out) and at most `max`
 */
export function positive(name: string, v: string, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > max) fail(`--${name} must be a whole number ${max === Number.MAX_SAFE_INTEGER ? 'of at least 1' : `from 1 to ${max}`}, got ${v}`);
  return Number(v);
}

/** the most charge points one process runs (--count); a benchmark spreads more over several driver processes */
export const MAX_COUNT = 1_000_000;

/** A share between 0 and 1 (a decimal number). */
export function share01(name: string, v: string): number {
  const n = Number(v);
  if (!/^\d*\.?\d+$/.test(v) || n > 1) fail(`--${name} must be a number from 0 to 1, got ${v}`);
  return n;
}

/**
 * identity,password lines, parsed as CSV (RFC 4180): a password holding `,` or `"` is quoted, as --write-csv writes it;
 * a header line (identity,…) and # comment lines are skipped. An unreadable or malformed file is a usage error.
 */
export function readCsv(file: string): Credential[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    fail(`--csv ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
  }
  let rows: string[][];
  try {
    rows = parseCsv(text, { skip_empty_lines: true, comment: '#', comment_no_infix: true, relax_column_count: true, trim: true }) as string[][];
  } catch (err) {
    fail(`--csv ${file}: ${(err as Error).message}`);
  }
  if (rows[0] && /^identity$/i.test(rows[0][0] ?? '')) rows.shift();
  return rows.map(([identity, password]) => {
    if (!identity) fail(`${file}: empty identity`);
    return { identity, password: password || undefined };
  });
}

/** a CSV field: quoted when it holds a comma, a quote or a line break (so readCsv gets it back unchanged) */
export function csvField(v: string): string {
  return /[",\r\n]|^\s|\s$/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** --password, else --password-file (its first line), else $SIMULATOR_PASSWORD; and where it came from */
export function givenPassword(a: { password?: string | undefined; 'password-file'?: string | undefined }): { password: string | undefined; source: string } {
  if (a.password !== undefined && a['password-file'] !== undefined) fail('--password and --password-file exclude each other');
  if (a.password !== undefined) return { password: a.password, source: '--password' };
  if (a['password-file'] !== undefined) {
    let text: string;
    try {
      text = fs.readFileSync(a['password-file'], 'utf8');
    } catch (err) {
      fail(`--password-file ${a['password-file']}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
    }
    const password = text.split(/\r?\n/)[0]!;
    if (!password) fail(`--password-file ${a['password-file']}: the first line is empty`);
    return { password, source: '--password-file' };
  }
  const env = process.env.SIMULATOR_PASSWORD;
  if (env) return { password: env, source: 'SIMULATOR_PASSWORD' };
  return { password: undefined, source: 'no password' };
}

export const OPTIONS = {
  url: { type: 'string' },
  identity: { type: 'string' },
  password: { type: 'string' },
  'password-file': { type: 'string' },
  csv: { type: 'string' },
  protocol: { type: 'string', default: 'ocpp1.6' },
  vendor: { type: 'string' },
  model: { type: 'string' },
  serial: { type: 'string' },
  firmware: { type: 'string' },
  connectors: { type: 'string' },
  'timeout-ms': { type: 'string' },
  'no-stop-data': { type: 'boolean', default: false },
  insecure: { type: 'boolean', default: false },
  'local-address': { type: 'string' },
  'spread-starts': { type: 'boolean', default: false },
  'replay-share': { type: 'string' },
  'idle-readings': { type: 'boolean', default: false },
  'state-dir': { type: 'string' },
  'no-state': { type: 'boolean', default: false },
  scenario: { type: 'string' },
  energy: { type: 'string' },
  power: { type: 'string' },
  minutes: { type: 'string' },
  'meter-interval': { type: 'string' },
  month: { type: 'string' },
  sessions: { type: 'string' },
  seed: { type: 'string' },
  realtime: { type: 'boolean', default: false },
  quirks: { type: 'string' },
  'id-tag': { type: 'string' },
  stay: { type: 'boolean', default: false },
  count: { type: 'string' },
  prefix: { type: 'string' },
  register: { type: 'boolean', default: false },
  token: { type: 'string' },
  'admin-token': { type: 'string' },
  'api-url': { type: 'string' },
  'write-csv': { type: 'string' },
  ramp: { type: 'string' },
  rate: { type: 'string' },
  duration: { type: 'string' },
  storm: { type: 'boolean', default: false },
  hold: { type: 'string' },
  'wait-go': { type: 'boolean', default: false },
  'storm-jitter': { type: 'string' },
  json: { type: 'boolean', default: false },
  verbose: { type: 'boolean', default: false },
  help: { type: 'boolean', default: false },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

/** parseArgs' own refusals (an unknown option, an option without its value, a stray argument) are usage errors too */
export function parse(args: string[]) {
  try {
    return parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: false });
  } catch (err) {
    fail((err as Error).message);
  }
}
