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
import { nodeArgs } from '../helpers/service-process.ts';

interface Run { code: number; out: string }

/** run a script of the service with exactly this environment; its exit code and everything it wrote */
async function run(script: string, env: Record<string, string>, args: string[] = []): Promise<Run> {
  const exec = promisify(execFile)(process.execPath, [...nodeArgs(script), ...args], {
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

  it('D244: a pooler refusing a startup parameter (PgBouncer, 08P01): the line says what to set, on the pooler and the role', { timeout: 60_000 }, async () => {
    // what PgBouncer without ignore_startup_parameters answers to the startup message: an ErrorResponse naming the
    // first parameter it does not know (it reads statement_timeout before options)
    const received: string[][] = [];
    const pooler = net.createServer((socket) => {
      let buf = Buffer.alloc(0);
      socket.on('error', () => undefined);
      socket.on('data', (chunk) => {
        buf = Buffer.concat([buf, chunk]);
        if (buf.length < 4 || buf.length < buf.readInt32BE(0)) return;
        // int32 length, int32 protocol version, then name\0value\0 … \0
        const params = buf.subarray(8, buf.readInt32BE(0) - 1).toString('utf8').split('\0');
        received.push(params);
        const refused = ['statement_timeout', 'options'].find((p) => params.includes(p)) ?? 'options';
        const fields = Buffer.from(`SFATAL\0VFATAL\0C08P01\0Munsupported startup parameter: ${refused}\0\0`, 'utf8');
        const head = Buffer.alloc(5);
        head.write('E', 0);
        head.writeInt32BE(fields.length + 4, 1);
        socket.end(Buffer.concat([head, fields]));
      });
    });
    await new Promise<void>((resolve) => pooler.listen(0, '127.0.0.1', resolve));
    const port = (pooler.address() as net.AddressInfo).port;
    try {
      const r = await run('src/main.ts', { DATA_DIR: freshDir(), DATABASE_URL: `postgresql://ere@127.0.0.1:${port}/ere` });
      expect(r.code).toBe(1);
      expect(received.length).toBeGreaterThanOrEqual(1);
      const line = r.out.split('\n').find((l) => l.includes('cannot start'))!;
      expect(line).toMatch(/^ere-gateway cannot start: DATABASE_URL: cannot use the database: unsupported startup parameter: statement_timeout \(08P01\); a connection pooler/);
      expect(line).toContain('ignore_startup_parameters = statement_timeout, options');
      for (const setting of ["SET statement_timeout = '30s'", 'SET jit = off', "SET default_transaction_isolation = 'read committed'"]) expect(line).toContain(setting);
      noStack(r.out);
    } finally {
      pooler.close();
    }
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
