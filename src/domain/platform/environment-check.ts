// D186 (C0.1): sandbox and production never share a database. The database records the APP_ENV of the first process
// that starts on it (migration 0079, one row); a process of the other environment stops with one line naming APP_ENV.
// A database from before 0079 takes the environment of the first process that starts on it.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { StartFailure } from '../../lib/start-failure.ts';

export async function verifyEnvironment(db: Db, appEnv: 'sandbox' | 'production'): Promise<void> {
  // two processes starting at once on a new database: one insert wins, and both compare against the winner
  await sql`insert into database_environment (app_env) values (${appEnv}) on conflict (id) do nothing`.execute(db);
  const { rows } = await sql<{ app_env: string }>`select app_env from database_environment where id`.execute(db);
  const recorded = rows[0]?.app_env;
  if (recorded === appEnv) return;
  throw new StartFailure(
    'APP_ENV',
    `this database belongs to ${recorded} and this process is ${appEnv}; sandbox and production never share a ` +
      `database (C0.1): give the ${appEnv} process its own database (DATABASE_URL, or DATA_DIR for PGlite)`,
  );
}
