// npm run migrate: apply migrations/*.sql to DATABASE_URL (or the PGlite data dir) and exit.
import { loadConfig, ConfigError } from '../config.ts';
import { databaseFailure, reasonOf, StartFailure } from '../lib/start-failure.ts';
import { createDb } from './database.ts';
import { migrate } from './migrate.ts';
import { ensureReadingPartitions } from '../jobs/partitions.job.ts';
import { createLogger } from '../logger.ts';

const USAGE = `Usage: npm run migrate

Applies the SQL migrations in migrations/ that the database has not had yet, then exits.
The database is DATABASE_URL (PostgreSQL), or without it the embedded PGlite database in DATA_DIR
(default ./data/<APP_ENV>); the same migrations run at every start of the service. Then it creates the
meter_readings month partitions the start creates (last month to PARTITION_AHEAD_MONTHS ahead): run as the role
that owns the schema, e.g. monthly, it lets the service run as a role without CREATE. No options.`;

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
    // D245: the months the start makes, made here by the migrating role: a service whose role may not create tables
    // (a split migration/runtime role) then finds them made; the output says which were created
    const created = await ensureReadingPartitions({
      db: handle.db,
      clock: () => new Date(),
      logger: createLogger({ level: 'silent' }),
      config,
    });
    if (created.length) console.log(`created month partitions: ${created.join(', ')}`);
  } finally {
    await handle.close();
  }
} catch (err) {
  if (err instanceof ConfigError || err instanceof StartFailure) console.error(err.message);
  else if (process.env.DATABASE_URL?.trim()) console.error(databaseFailure(err).message);
  else console.error(`migrate failed: ${reasonOf(err)}`);
  process.exit(1);
}
