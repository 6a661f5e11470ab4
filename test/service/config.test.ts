// C0.5: one zod schema over the environment; a bad value stops the process naming every bad key;
// .env.example documents every key.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { configSchema, ConfigError, loadConfig } from '../../src/config.ts';
import { TEST_OPERATOR } from '../helpers/app.ts';
import { nodeArgs } from '../helpers/service-process.ts';

describe('configuration (C0.5)', () => {
  it('defaults: sandbox on PGlite in ./data/sandbox, port 8080', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({ APP_ENV: 'sandbox', PORT: 8080, HOST: '0.0.0.0', DATA_DIR: './data/sandbox', PUBLIC_BASE_URL: 'http://localhost:8080' });
    expect(c.DATABASE_URL).toBeUndefined();
    expect(Object.isFrozen(c)).toBe(true);
    // an empty value means "not set"
    expect(loadConfig({ PORT: '', TRUST_PROXY: ' ' }).PORT).toBe(8080);
  });

  it('a bad configuration names every bad key', () => {
    let err: unknown;
    try {
      loadConfig({ PORT: 'eighty', APP_ENV: 'staging', DATABASE_URL: 'mysql://x', RATE_LIMIT_CPO_PER_MIN: '0', ENERGY_AGGREGATE_CRON: 'every day', ADMIN_TOKEN: 'short' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const keys = (err as ConfigError).issues.map((i) => i.key).sort();
    expect(keys).toEqual(['ADMIN_TOKEN', 'APP_ENV', 'DATABASE_URL', 'ENERGY_AGGREGATE_CRON', 'PORT', 'RATE_LIMIT_CPO_PER_MIN']);
    for (const k of keys) expect((err as Error).message).toContain(k);
  });

  it('batches in flight: 2 unless set, from 1 to 6 (the pool has 10 connections; D87)', () => {
    expect(loadConfig({}).INGEST_BATCHES_IN_FLIGHT).toBe(2);
    expect(loadConfig({ INGEST_BATCHES_IN_FLIGHT: '6' }).INGEST_BATCHES_IN_FLIGHT).toBe(6);
    for (const bad of ['0', '7', 'two']) expect(() => loadConfig({ INGEST_BATCHES_IN_FLIGHT: bad })).toThrow(/INGEST_BATCHES_IN_FLIGHT/);
  });

  it('production requires DATA_ENCRYPTION_KEY', () => {
    expect(() => loadConfig({ APP_ENV: 'production' })).toThrow(/DATA_ENCRYPTION_KEY/);
    expect(loadConfig({ APP_ENV: 'production', DATA_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'), ...TEST_OPERATOR }).DATA_DIR).toBe('./data/production');
  });

  it('D191: MANDATE_SIGNING_SECRET is no key any more (nothing read it); a deployment that still sets it starts', () => {
    expect(Object.keys(configSchema.shape)).not.toContain('MANDATE_SIGNING_SECRET');
    const c = loadConfig({ MANDATE_SIGNING_SECRET: 'an old deployment still sets this' });
    expect(c).not.toHaveProperty('MANDATE_SIGNING_SECRET');
    expect(fs.readFileSync('README.md', 'utf8')).not.toContain('MANDATE_SIGNING_SECRET');
  });

  it('D191: a number that is not one says which numbers the key takes', () => {
    for (const bad of ['abc', '1.5', '-1', '65536']) expect(() => loadConfig({ PORT: bad })).toThrow(/^ {2}PORT: must be a whole number 0–65535$/m);
  });

  it('D187: production refuses to start while an operator identity key is unset or the placeholder, in one line naming them; sandbox keeps its defaults', async () => {
    const key = Buffer.alloc(32, 1).toString('base64');
    const r = await promisify(execFile)(process.execPath, nodeArgs('src/main.ts'), {
      env: { PATH: process.env.PATH ?? '', APP_ENV: 'production', DATA_ENCRYPTION_KEY: key, DATA_DIR: path.join(os.tmpdir(), `ere-d187-${process.pid}`), OPERATOR_KVK: '12345678', OPERATOR_PRIVACY_URL: 'https://laadstroom.example/privacy' },
      timeout: 60_000,
    }).then(
      (x) => ({ code: 0, out: x.stdout + x.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
    );
    expect(r.code, r.out).toBe(1);
    expect(r.out).toMatch(/^ {2}OPERATOR_NAME, OPERATOR_ADDRESS, OPERATOR_KVK, OPERATOR_SUPPORT_EMAIL: required in production, .*$/m);
    expect(fs.existsSync(path.join(os.tmpdir(), `ere-d187-${process.pid}`))).toBe(false);
    // the placeholder name is refused like an unset one; all five set starts
    expect(() => loadConfig({ APP_ENV: 'production', DATA_ENCRYPTION_KEY: key, ...TEST_OPERATOR, OPERATOR_NAME: 'ERE Gateway B.V.' })).toThrow(/^ {2}OPERATOR_NAME: required in production/m);
    expect(loadConfig({ APP_ENV: 'production', DATA_ENCRYPTION_KEY: key, ...TEST_OPERATOR }).OPERATOR_NAME).toBe('Laadstroom B.V.');
    expect(loadConfig({}).OPERATOR_NAME).toBe('ERE Gateway B.V.');
  });

  it('D192: the documented .env command works on .env.example as it is, and gives the documented defaults', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-dotenv-'));
    try {
      fs.copyFileSync('.env.example', path.join(dir, '.env.example'));
      // exactly the command .env.example's header documents, in bash, then the environment it leaves
      const command = /^#\s+(sed -E .*); npm start$/m.exec(fs.readFileSync('.env.example', 'utf8'))?.[1];
      expect(command).toBe("sed -E 's/^# ([A-Z_]+=)/\\1/' .env.example > .env; set -a; . ./.env; set +a");
      const r = await promisify(execFile)('bash', ['-c', `${command!} && node -e 'console.log(JSON.stringify(process.env))'`], {
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', HOME: dir },
      });
      expect(r.stderr).toBe(''); // before: "*: command not found", "Gateway: command not found", a syntax error at '<'
      const env = JSON.parse(r.stdout) as Record<string, string>;
      const documented = [...fs.readFileSync('.env.example', 'utf8').matchAll(/^# ([A-Z][A-Z0-9_]+)=(.*)$/gm)];
      for (const [, key, raw] of documented) expect(env[key!], key).toBe(raw!.replace(/^'(.*)'$/, '$1'));
      // and those values are the defaults: the configuration they make is the one without them
      const defaults = loadConfig({}) as Record<string, unknown>;
      const loaded = loadConfig(env) as Record<string, unknown>;
      for (const [, key] of documented) if (defaults[key!] !== undefined) expect(loaded[key!], key).toEqual(defaults[key!]);
      expect(env.SMTP_FROM).toBe('ERE Gateway <no-reply@ere-gateway.local>');
      expect(env.OUTBOX_DELIVER_CRON).toBe('* * * * *');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("D194: README's configuration table names every key of the schema", () => {
    const rows = fs.readFileSync('README.md', 'utf8').split('\n').filter((l) => l.startsWith('| `'));
    const named = new Set(rows.flatMap((r) => [...r.split('|')[1]!.matchAll(/`([A-Z0-9_]+)`/g)].map((m) => m[1]!)));
    expect(Object.keys(configSchema.shape).filter((k) => !named.has(k))).toEqual([]); // OCPP_MAX_CONNECTIONS was missing
  });

  it('.env.example documents exactly the keys of the schema', () => {
    const text = fs.readFileSync('.env.example', 'utf8');
    const documented = [...text.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual(Object.keys(configSchema.shape).sort());
  });

  it('the service exits 1 naming the bad keys', { timeout: 90_000 }, async () => {
    const run = promisify(execFile)(process.execPath, nodeArgs('src/main.ts'), {
      env: { PATH: process.env.PATH, PORT: 'x', LOG_LEVEL: 'loud', DATA_DIR: '/tmp/ere-config-test-never-used' },
    });
    const err = await run.then(() => null, (e: { code: number; stderr: string }) => e);
    expect(err).not.toBeNull();
    expect(err!.code).toBe(1);
    expect(err!.stderr).toContain('PORT');
    expect(err!.stderr).toContain('LOG_LEVEL');
    expect(fs.existsSync('/tmp/ere-config-test-never-used')).toBe(false);
  });
});
