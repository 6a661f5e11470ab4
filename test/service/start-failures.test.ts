// D151: a value that is wrong on its face is refused before anything is created (C0.5, every bound named); a start
// that fails on what only the running system knows (database unreachable or missing, SSL refused, port taken, host
// unresolvable) prints one line naming the key and exits 1, never a stack trace. `npm run migrate -- --help` helps.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { createTestDb } from '../helpers/db.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

interface Run { code: number; out: string }

/** run a script of the service with exactly this environment; its exit code and everything it wrote */
async function run(script: string, env: Record<string, string>, args: string[] = []): Promise<Run> {
  const exec = promisify(execFile)(process.execPath, ['--import', 'tsx', script, ...args], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'warn', JOBS_ENABLED: 'false', ...env },
    timeout: 120_000,
  });
  return exec.then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
  );
}

const startFailDir = tempDirs('ere-startfail-');
const freshDir = () => path.join(startFailDir(), 'data');
const noStack = (out: string) => expect(out).not.toMatch(/^\s+at /m);

describe('D151: values out of bounds are refused before anything is created', () => {
  it('every key has bounds: ports, timers within 2^31-1 ms, percentages, shares, URL schemes', () => {
    const bad: Record<string, string> = {
      PORT: '99999',
      STREAM_KEEPALIVE_SECONDS: '3000000',
      HTTP_REQUEST_TIMEOUT_SECONDS: '1e9',
      DB_STATEMENT_TIMEOUT_MS: '3000000000',
      ERE_FEE_PCT: '150',
      RENEWABLE_SHARE: '2026:5',
      PUBLIC_BASE_URL: 'ere.example.nl:8080',
      EAN_REGISTER_URL: 'ftp://register.example.nl',
      OPERATOR_PRIVACY_URL: 'mailto:privacy@example.nl',
      SMTP_URL: 'garbage',
      HOST: 'not a host',
    };
    let message = '';
    try {
      loadConfig(bad);
    } catch (e) {
      message = (e as Error).message;
    }
    for (const key of Object.keys(bad)) expect(message).toContain(`${key}:`);
    // the edges still pass
    const ok = loadConfig({ PORT: '65535', ERE_FEE_PCT: '100', RENEWABLE_SHARE: '2026:1', PUBLIC_BASE_URL: 'https://ere.example.nl', SMTP_URL: 'smtps://u:p@mail.example.nl', HOST: '::' });
    expect(ok).toMatchObject({ PORT: 65535, ERE_FEE_PCT: '100', PUBLIC_BASE_URL: 'https://ere.example.nl' });
  });

  it('the process exits 1 naming the keys, and creates no data dir', { timeout: 60_000 }, async () => {
    const dir = freshDir();
    const r = await run('src/main.ts', { DATA_DIR: dir, PORT: '99999', SMTP_URL: 'garbage', ERE_FEE_PCT: '150' });
    expect(r.code).toBe(1);
    for (const key of ['PORT', 'SMTP_URL', 'ERE_FEE_PCT']) expect(r.out).toContain(key);
    noStack(r.out);
    expect(fs.existsSync(dir)).toBe(false);
  });
});

describe('D151: failures only the running system can tell are one line naming the key', () => {
  it('HOST that does not resolve: exit 1 before the data dir is made', { timeout: 60_000 }, async () => {
    const dir = freshDir();
    const r = await run('src/main.ts', { DATA_DIR: dir, HOST: 'not-a-host.invalid' });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/cannot start: HOST: cannot resolve "not-a-host\.invalid"/);
    noStack(r.out);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('DATABASE_URL where nothing listens: exit 1 naming DATABASE_URL', { timeout: 60_000 }, async () => {
    const r = await run('src/main.ts', { DATA_DIR: freshDir(), DATABASE_URL: 'postgresql://root@127.0.0.1:1/postgres' });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/cannot start: DATABASE_URL: .*ECONNREFUSED/);
    noStack(r.out);
  });

  if (process.env.DATABASE_URL) {
    it('DATABASE_URL to a database that does not exist, or with SSL the server refuses: exit 1 naming DATABASE_URL', { timeout: 60_000 }, async () => {
      const base = new URL(process.env.DATABASE_URL!);
      const missing = new URL(base);
      missing.pathname = '/ere_no_such_database';
      let r = await run('src/main.ts', { DATA_DIR: freshDir(), DATABASE_URL: missing.toString() });
      expect(r.code).toBe(1);
      expect(r.out).toMatch(/cannot start: DATABASE_URL: .*"ere_no_such_database" does not exist/);
      noStack(r.out);
      const ssl = new URL(base);
      ssl.searchParams.set('sslmode', 'require');
      r = await run('src/main.ts', { DATA_DIR: freshDir(), DATABASE_URL: ssl.toString() });
      expect(r.code).toBe(1);
      expect(r.out).toMatch(/cannot start: DATABASE_URL: .*SSL/);
      noStack(r.out);
    });
  }

  it('PORT in use: exit 1 naming PORT', { timeout: 120_000 }, async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const env: Record<string, string> = { DATA_DIR: freshDir(), PORT: String(port) };
      if (process.env.DATABASE_URL) {
        const db = await createTestDb();
        await db.close();
        env.DATABASE_URL = db.url!;
      }
      const r = await run('src/main.ts', env);
      expect(r.code).toBe(1);
      expect(r.out).toContain(`cannot start: PORT: 127.0.0.1:${port} is already in use`);
      noStack(r.out);
    } finally {
      taken.close();
    }
  });

  it('npm run migrate -- --help (and -h) prints the usage and exits 0 without migrating', { timeout: 60_000 }, async () => {
    for (const flag of ['--help', '-h']) {
      const dir = freshDir();
      const r = await run('src/db/migrate-cli.ts', { DATA_DIR: dir }, [flag]);
      expect(r.code).toBe(0);
      expect(r.out).toContain('Usage: npm run migrate');
      expect(fs.existsSync(dir)).toBe(false);
    }
  });
});
