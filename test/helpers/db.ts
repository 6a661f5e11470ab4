// A fresh database per test file: a PGlite copy of the migrated template, or a PostgreSQL database created
// from the template database when DATABASE_URL is set (CI). Tests never mock the database.
import crypto from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import { inject } from 'vitest';
import { createDb, type DbHandle } from '../../src/db/database.ts';

function withDatabase(url: string, dbName: string): string {
  const u = new URL(url);
  u.pathname = '/' + dbName;
  return u.toString();
}

export interface TestDb extends DbHandle {
  /** connection string of this test's database (PostgreSQL only), for a second process or app */
  url?: string;
}

export async function createTestDb(): Promise<TestDb> {
  const tpl = inject('pgTemplate');
  const base = process.env.DATABASE_URL;
  if (tpl && base) {
    const name = `ere_t_${tpl.slice('ere_tpl_'.length)}_${crypto.randomBytes(5).toString('hex')}`;
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          await c.query(`create database ${name} template ${tpl}`);
          break;
        } catch (err) {
          // two files copying the template at the same moment: "source database is being accessed"
          if (attempt >= 20) throw err;
          await new Promise((r) => setTimeout(r, 100 + Math.random() * 200));
        }
      }
    } finally {
      await c.end();
    }
    const url = withDatabase(base, name);
    const h = await createDb({ DATABASE_URL: url, poolSize: 5 });
    return { ...h, url };
  }
  const file = inject('pglitePath');
  const blob = new Blob([fs.readFileSync(file)]);
  return createDb({ inMemory: true, loadDataDir: blob });
}
