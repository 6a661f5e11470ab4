// Prepares one migrated template database per test run; every test file then starts from a copy of it
// (TOOLCHAIN.md §3: loading a migrated PGlite template takes ~0.5 s instead of ~3 s of initdb + migrations).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import pg from 'pg';
import { createDb } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import type { TestProject } from 'vitest/node';

export default async function setup(project: TestProject) {
  const runId = crypto.randomBytes(4).toString('hex');
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
    return async () => {
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
  return async () => {
    fs.rmSync(file, { force: true });
  };
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
  }
}
