// npm run migrate: apply migrations/*.sql to DATABASE_URL (or the PGlite data dir) and exit.
import { loadConfig, ConfigError } from '../config.ts';
import { databaseFailure, reasonOf, StartFailure } from '../lib/start-failure.ts';
import { createDb } from './database.ts';
import { migrate } from './migrate.ts';

const USAGE = `Usage: npm run migrate

Applies the SQL migrations in migrations/ that the database has not had yet, then exits.
The database is DATABASE_URL (PostgreSQL), or without it the embedded PGlite database in DATA_DIR
(default ./data/<APP_ENV>); the same migrations run at every start of the service. No options.`;

// D151: asking for help migrated ./data/sandbox; every argument is refused or answered before a database is opened
const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
  console.log(USAGE);
  process.exit(0);
}
if (args.length) {
  console.error(`unknown argument: ${args[0]}\n\n${USAGE}`);
  process.exit(2);
}

try {
  const config = loadConfig();
  const handle = await createDb(config).catch((err: unknown) => {
    if (err instanceof StartFailure || !config.DATABASE_URL) throw err;
    throw databaseFailure(err);
  });
  try {
    const applied = await migrate(handle.db);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  } finally {
    await handle.close();
  }
} catch (err) {
  if (err instanceof ConfigError || err instanceof StartFailure) console.error(err.message);
  else if (process.env.DATABASE_URL?.trim()) console.error(databaseFailure(err).message);
  else console.error(`migrate failed: ${reasonOf(err)}`);
  process.exit(1);
}
