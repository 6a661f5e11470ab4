// D245: the service on an operator's PostgreSQL whose runtime role does not own the schema. A start that fails on a
// database error after the database was opened (a role without CREATE: 42501 at the first migration) is one line
// naming DATABASE_URL with PostgreSQL's message and code, exit 1, no stack. A split setup (the owner role runs
// `npm run migrate`, the service runs as a role with SELECT/INSERT/UPDATE/DELETE only) starts: `npm run migrate` made
// the months the start makes; a month still missing is one error line saying what to do, the start goes on, and the
// partitions job ends `failed` with that line. PostgreSQL only (roles and privileges).
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { monthPartition } from '../../src/jobs/partitions.job.ts';
import { startServiceProcess, nodeArgs } from '../helpers/service-process.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const base = process.env.DATABASE_URL;
const tmp = tempDirs('ere-d245-');
const suffix = crypto.randomBytes(4).toString('hex');
const ADMIN_TOKEN = 'd245-admin-token-0123456789';
const noStack = (out: string) => expect(out).not.toMatch(/^\s+at /m);

const urlFor = (user: string, database: string) => {
  const u = new URL(base!);
  u.username = user;
  u.password = '';
  u.pathname = '/' + database;
  return u.toString();
};

/** one statement as `user` on `database` (root on postgres by default) */
async function query(text: string, user?: string, database?: string): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: user || database ? urlFor(user ?? new URL(base!).username, database ?? 'postgres') : base });
  await c.connect();
  try {
    return await c.query(text);
  } finally {
    await c.end();
  }
}

const made = { roles: [] as string[], databases: [] as string[] };
async function role(name: string): Promise<string> {
  const r = `d245_${suffix}_${name}`;
  await query(`create role ${r} login`);
  made.roles.push(r);
  return r;
}
async function database(name: string, owner: string): Promise<string> {
  const d = `d245_${suffix}_${name}`;
  await query(`create database ${d} owner ${owner}`);
  made.databases.push(d);
  return d;
}

// dropping a database checkpoints; on a machine loaded by the whole suite that took over a minute once
afterAll(async () => {
  if (!base) return;
  for (const d of made.databases) await query(`drop database if exists ${d} with (force)`).catch(() => undefined);
  for (const r of made.roles) await query(`drop role if exists ${r}`).catch(() => undefined);
}, 180_000);

function run(script: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  return promisify(execFile)(process.execPath, nodeArgs(script), {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
    timeout: 120_000,
  }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
  );
}

const serviceEnv = (url: string) => ({
  DATABASE_URL: url,
  DATA_DIR: tmp(),
  APP_ENV: 'sandbox',
  ADMIN_TOKEN,
  DATA_ENCRYPTION_KEY: Buffer.alloc(32, 45).toString('base64'),
  JOBS_ENABLED: 'false',
  LOG_LEVEL: 'info',
});

describe.skipIf(!base)('D245: a runtime role that does not own the schema', () => {
  it('a start whose role may not create tables: one line naming DATABASE_URL with the message and code, exit 1', { timeout: 120_000 }, async () => {
    const owner = await role('owner');
    const app = await role('noperm');
    const db = await database('noperm', owner);
    // PostgreSQL 15: nobody but the owner may create in the schema public of a new database
    const failed = await startServiceProcess(serviceEnv(urlFor(app, db))).then(
      async (svc) => {
        await svc.kill();
        return 'it started';
      },
      (err: Error) => err.message,
    );
    const out = failed.replace(/^the service exited \(1\) before it listened:\n/, '');
    expect(failed, failed).toMatch(/^the service exited \(1\) before it listened/);
    expect(out.trim()).toBe('ere-gateway cannot start: DATABASE_URL: cannot use the database: permission denied for schema public (42501)');
    noStack(out);
  });

  it('split roles: npm run migrate makes the start\'s months; a month still missing is one error line, the start goes on, the job ends failed with it', { timeout: 240_000 }, async () => {
    const owner = await role('migrate');
    const app = await role('app');
    const db = await database('split', owner);
    const now = new Date();
    const last = monthPartition(now, -1).name;
    const ahead = monthPartition(now, 3).name;

    const migrated = await run('src/db/migrate-cli.ts', { DATABASE_URL: urlFor(owner, db) });
    expect(migrated.code, migrated.out).toBe(0);
    expect(migrated.out).toContain('applied: ');
    // migration 0054 makes this month and 3 ahead; the start also makes last month, so must npm run migrate
    expect(migrated.out).toMatch(new RegExp(`created month partitions: .*${last}`));
    const again = await run('src/db/migrate-cli.ts', { DATABASE_URL: urlFor(owner, db) });
    expect(again.out.trim()).toBe('database is up to date');

    for (const grant of [
      `grant usage on schema public to ${app}`,
      `grant select, insert, update, delete on all tables in schema public to ${app}`,
      `grant usage, select on all sequences in schema public to ${app}`,
    ]) {
      await query(grant, owner, db);
    }
    // a month the migrating role has not made yet (the month that becomes 3 ahead when npm run migrate last ran a month ago)
    await query(`drop table ${ahead}`, owner, db);

    const svc = await startServiceProcess(serviceEnv(urlFor(app, db)));
    try {
      const ready = await fetch(`${svc.url}/readyz`);
      expect(ready.status).toBe(200);
      const lines = svc
        .output()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const denied = lines.filter((l) => l.event === 'partitions.not_permitted');
      expect(denied).toHaveLength(1);
      expect(denied[0]).toMatchObject({ level: 50, partition: ahead, code: '42501' });
      expect(String(denied[0]!.msg)).toMatch(/permission denied for schema public \(42501\)\. Run `npm run migrate` as the role that owns the schema/);
      noStack(svc.output());

      // the scheduled job (run here by hand) ends failed with the same line, not an internal error
      const res = await fetch(`${svc.url}/admin/jobs/partitions/run`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(res.status).toBe(500);
      const jobs = (await (await fetch(`${svc.url}/admin/jobs`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as {
        jobs: Array<{ name: string; last_run: { outcome: string; error: string | null } | null }>;
      };
      const run = jobs.jobs.find((j) => j.name === 'partitions')!.last_run!;
      expect(run.outcome).toBe('failed');
      expect(run.error).toMatch(new RegExp(`^meter_readings: cannot create the month partition ${ahead}: permission denied for schema public \\(42501\\)\\. Run \`npm run migrate\``));
      noStack(svc.output());
    } finally {
      await svc.kill('SIGTERM');
    }
  });
});
