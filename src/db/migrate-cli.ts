// npm run migrate: apply migrations/*.sql to DATABASE_URL (or the PGlite data dir) and exit.
import { loadConfig, ConfigError } from '../config.ts';
import { createDb } from './database.ts';
import { migrate } from './migrate.ts';

try {
  const config = loadConfig();
  const handle = await createDb(config);
  try {
    const applied = await migrate(handle.db);
    console.log(applied.length ? `applied: ${applied.join(', ')}` : 'database is up to date');
  } finally {
    await handle.close();
  }
} catch (err) {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
}
