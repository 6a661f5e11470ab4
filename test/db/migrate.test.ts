// Migrations: applied once, in order, by concurrent starters (the Migrator's advisory lock on PostgreSQL).
import crypto from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/database.ts';
import { listMigrationFiles, migrate, pendingMigrations } from '../../src/db/migrate.ts';
import { createTestDb } from '../helpers/db.ts';
import { withDatabase } from '../helpers/global-setup.ts';

describe('migrations', () => {
  it('file names have a fixed 4-digit prefix and are unique by number', () => {
    const files = listMigrationFiles();
    expect(files[0]).toBe('0001_core.sql');
    const numbers = files.map((f) => f.slice(0, 4));
    expect(new Set(numbers).size).toBe(numbers.length);
  });

  if (process.env.DATABASE_URL) {
    it('two processes migrating one fresh PostgreSQL database at once apply each migration once', async () => {
      const base = process.env.DATABASE_URL!;
      const name = `ere_mig_${crypto.randomBytes(5).toString('hex')}`;
      const admin = new pg.Client({ connectionString: base });
      await admin.connect();
      await admin.query(`create database ${name}`);
      const [h1, h2] = await Promise.all([createDb({ DATABASE_URL: withDatabase(base, name) }), createDb({ DATABASE_URL: withDatabase(base, name) })]);
      try {
        const [r1, r2] = await Promise.all([migrate(h1.db), migrate(h2.db)]);
        const files = listMigrationFiles().map((f) => f.replace(/\.sql$/, ''));
        expect([...r1, ...r2].sort()).toEqual([...files].sort());
        expect(r1.filter((m) => r2.includes(m))).toEqual([]);
        expect(await pendingMigrations(h1.db)).toEqual([]);
      } finally {
        await h1.close();
        await h2.close();
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.end();
      }
    });

    it("migrations are not cut by the service's statement_timeout (a schema change on a large table takes time)", async () => {
      const base = process.env.DATABASE_URL!;
      const name = `ere_mig_${crypto.randomBytes(5).toString('hex')}`;
      const admin = new pg.Client({ connectionString: base });
      await admin.connect();
      await admin.query(`create database ${name}`);
      // 1 ms: far shorter than creating the schema takes, so every migration would be cancelled under it
      const h = await createDb({ DATABASE_URL: withDatabase(base, name), DB_STATEMENT_TIMEOUT_MS: 1 });
      try {
        expect(await migrate(h.db)).toHaveLength(listMigrationFiles().length);
        // the service's own queries still carry the timeout
        const r = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(h.db);
        expect(r.rows[0]!.statement_timeout).toBe('1ms');
      } finally {
        await h.close();
        await admin.query(`drop database if exists ${name} with (force)`);
        await admin.end();
      }
    });
  } else {
    it('migrating an up-to-date PGlite database again applies nothing', async () => {
      const h = await createTestDb(); // a copy of the template that global-setup migrated
      try {
        expect(await migrate(h.db)).toEqual([]);
        expect(await pendingMigrations(h.db)).toEqual([]);
      } finally {
        await h.close();
      }
    });
  }
});
