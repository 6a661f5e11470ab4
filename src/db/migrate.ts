// Plain SQL migrations from migrations/*.sql, applied in name order by Kysely's Migrator. The Migrator
// takes a PostgreSQL advisory lock, so two processes starting at once apply each migration once.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './database.ts';
import { StartFailure } from '../lib/start-failure.ts';

export const MIGRATIONS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations');

class SqlFileProvider implements MigrationProvider {
  constructor(private readonly dir: string) {}
  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {};
    for (const file of listMigrationFiles(this.dir)) {
      const text = fs.readFileSync(path.join(this.dir, file), 'utf8');
      out[file.replace(/\.sql$/, '')] = {
        up: async (db) => {
          await sql.raw(text).execute(db);
        },
      };
    }
    return out;
  }
}

export function listMigrationFiles(dir = MIGRATIONS_DIR): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
}

export async function migrate(db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  // On one connection without the pool's statement_timeout: a schema change on a large table, or waiting for
  // another process's migration lock, may take longer than the limit that guards the service's own queries.
  const { error, results } = await db.connection().execute(async (conn) => {
    // the SET itself runs under the pool's limit: on a starved machine with a limit of a few ms it can be cancelled
    // (SQLSTATE 57014) before it takes effect, so it is tried again (seen in the suite with a 1 ms limit)
    for (let attempt = 1; ; attempt++) {
      try {
        await sql`set statement_timeout = 0`.execute(conn);
        break;
      } catch (err) {
        if (attempt >= 5 || (err as { code?: unknown }).code !== '57014') throw err;
      }
    }
    try {
      // D188: a database a newer release migrated (a migration this release does not have) is refused in one line;
      // kysely's "corrupted migrations" error came as an 11-line stack, and npm run migrate blamed DATABASE_URL
      const newer = await unknownMigrations(conn, dir);
      if (newer.length) throw newerReleaseFailure(newer);
      return await new Migrator({ db: conn, provider: new SqlFileProvider(dir), allowUnorderedMigrations: true }).migrateToLatest();
    } finally {
      await sql`reset statement_timeout`.execute(conn);
    }
  });
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Migrations the database has applied that this release does not have (a newer release migrated it). */
async function unknownMigrations(db: Db, dir: string): Promise<string[]> {
  const { rows } = await sql<{ present: boolean }>`select to_regclass('kysely_migration') is not null as present`.execute(db);
  if (!rows[0]?.present) return [];
  const known = new Set(listMigrationFiles(dir).map((f) => f.replace(/\.sql$/, '')));
  const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  return applied.rows.map((r) => r.name).filter((n) => !known.has(n));
}

function newerReleaseFailure(names: string[]): StartFailure {
  const key = process.env.DATABASE_URL?.trim() ? 'DATABASE_URL' : 'DATA_DIR';
  const shown = names.length > 3 ? `${names.slice(0, 3).join(', ')} and ${names.length - 3} more` : names.join(', ');
  return new StartFailure(
    key,
    `the database was migrated by a newer release of ere-gateway (migration ${shown}, which this release does not have); ` +
      'this release cannot run on it: run that release or a later one',
  );
}

/** Names of migration files on disk that the database has not applied (empty = up to date). */
export async function pendingMigrations(db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  const applied = await sql<{ name: string }>`select name from kysely_migration`
    .execute(db)
    .then((r) => new Set(r.rows.map((x) => x.name)));
  return listMigrationFiles(dir)
    .map((f) => f.replace(/\.sql$/, ''))
    .filter((n) => !applied.has(n));
}
