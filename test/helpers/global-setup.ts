// Prepares one migrated template database per test run; every test file then starts from a copy of it
// (TOOLCHAIN.md §3: loading a migrated PGlite template takes ~0.5 s instead of ~3 s of initdb + migrations).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { createDb } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import type { TestProject } from 'vitest/node';

export default async function setup(project: TestProject) {
  const runId = crypto.randomBytes(4).toString('hex');
  // D247: the service compiled once for the run (npm run build's emit, without its type check), while the template
  // is made: the tests that start it as a child process run that copy with plain node (nodeArgs in
  // service-process.ts), not the sources through tsx, whose loader cost each of some 60 starts ~1.2 s of CPU
  const distRoot = path.join(os.tmpdir(), `ere-dist-${runId}`);
  const building = buildService(distRoot);
  const removeDist = () => fs.rmSync(distRoot, { recursive: true, force: true });
  const url = process.env.DATABASE_URL;
  if (url) {
    const tpl = `ere_tpl_${runId}`;
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`create database ${tpl}`);
    await admin.end();
    const h = await createDb({ DATABASE_URL: withDatabase(url, tpl) });
    await migrate(h.db);
    await h.close();
    project.provide('pgTemplate', tpl);
    project.provide('pglitePath', '');
    project.provide('serviceDist', await building);
    return async () => {
      removeDist();
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      const dbs = await c.query<{ datname: string }>(
        `select datname from pg_database where datname like $1 or datname = $2`,
        [`ere_t_${runId}_%`, tpl],
      );
      for (const { datname } of dbs.rows) {
        await c.query(`drop database if exists ${datname} with (force)`).catch(() => {});
      }
      await c.end();
    };
  }
  const file = path.join(os.tmpdir(), `ere-template-${runId}.tar.gz`);
  const tmpl = await buildPgliteTemplate();
  fs.writeFileSync(file, tmpl);
  project.provide('pgTemplate', '');
  project.provide('pglitePath', file);
  project.provide('serviceDist', await building);
  return async () => {
    fs.rmSync(file, { force: true });
    removeDist();
  };
}

/** scripts/build.mjs into `root`/dist with node_modules linked beside it (as the Dockerfile lays it out); its path. */
async function buildService(root: string): Promise<string> {
  const out = path.join(root, 'dist');
  const repo = path.resolve(import.meta.dirname, '../..');
  const result = await new Promise<{ code: number | null; output: string }>((resolve) => {
    const child = spawn(process.execPath, [path.join(repo, 'scripts/build.mjs'), '--out-dir', out, '--no-check'], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (b: Buffer) => (output += b.toString()));
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
  if (result.code !== 0) throw new Error(`the test run's build of the service failed:\n${result.output}`);
  fs.symlinkSync(path.join(repo, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  return out;
}

async function buildPgliteTemplate(): Promise<Buffer> {
  const { PGlite, types } = await import('@electric-sql/pglite');
  const { Kysely } = await import('kysely');
  const { PGliteDialect } = await import('../../src/db/pglite-dialect.ts');
  const pgl = await PGlite.create('memory://', {
    parsers: { [types.INT8]: (v: string) => v, [types.NUMERIC]: (v: string) => v, [types.DATE]: (v: string) => v },
  });
  const db = new Kysely<never>({ dialect: new PGliteDialect(pgl) });
  await migrate(db as never);
  const blob = await pgl.dumpDataDir('none');
  const buf = Buffer.from(await blob.arrayBuffer());
  await db.destroy();
  return buf;
}

export function withDatabase(url: string, dbName: string): string {
  const u = new URL(url);
  u.pathname = '/' + dbName;
  return u.toString();
}

declare module 'vitest' {
  export interface ProvidedContext {
    pgTemplate: string;
    pglitePath: string;
    /** D247: the run's compiled copy of the service (dist/, with src/main.js) */
    serviceDist: string;
  }
}
