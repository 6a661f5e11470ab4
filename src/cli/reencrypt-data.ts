// npm run admin -- reencrypt-data (D251): step 3 of a key rotation. Unlike the other admin commands it does not talk
// to the admin API: it opens the database itself (DATABASE_URL, or DATA_DIR's PGlite with the service stopped) with
// this environment's keys, DATA_ENCRYPTION_KEY and DATA_ENCRYPTION_KEYS_PREVIOUS, the configuration of step 2.
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { ConfigError, loadConfig } from '../config.ts';
import { createDb, type DbHandle } from '../db/database.ts';
import { pendingMigrations } from '../db/migrate.ts';
import { createCipher, encryptionKeyFile, previousKeys, resolveEncryptionKey } from '../lib/iban-crypto.ts';
import { reasonOf, StartFailure } from '../lib/start-failure.ts';
import { verifyDataKey } from '../domain/platform/data-key-check.ts';
import { reencryptData } from '../domain/platform/reencrypt.ts';
import type { CliIo } from './admin.ts';

const PREFIX = 'admin: reencrypt-data:';

/** Runs the command; returns the exit code (0 done and nothing needs an old key; 1 otherwise; 2 a usage error). */
export async function runReencryptData(args: string[], env: Record<string, string | undefined>, io: CliIo): Promise<number> {
  let check = false;
  let batchSize = 200;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--check') check = true;
    else if (a === '--batch-size' || a.startsWith('--batch-size=')) {
      const v = a.includes('=') ? a.slice(a.indexOf('=') + 1) : args[++i];
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 10_000) return usage(io, '--batch-size must be a whole number 1–10000');
      batchSize = n;
    } else return usage(io, `unknown argument "${a}"`);
  }
  let config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`${PREFIX} ${err.message}`);
      return 1;
    }
    throw err;
  }
  // a sandbox without DATA_ENCRYPTION_KEY uses the key its start generated; this command never generates one
  if (!config.DATA_ENCRYPTION_KEY && !fs.existsSync(encryptionKeyFile(config.DATA_DIR))) {
    io.err(`${PREFIX} DATA_ENCRYPTION_KEY is not set (and ${encryptionKeyFile(config.DATA_DIR)} does not exist): set the key the service encrypts with`);
    return 1;
  }
  // nor does it make an empty embedded database where DATA_DIR names none
  if (!config.DATABASE_URL && !fs.existsSync(path.resolve(config.DATA_DIR, 'pglite'))) {
    io.err(`${PREFIX} DATA_DIR: no embedded database in ${path.resolve(config.DATA_DIR)} (and DATABASE_URL is not set)`);
    return 1;
  }
  const cipher = createCipher(resolveEncryptionKey(config), previousKeys(config.DATA_ENCRYPTION_KEYS_PREVIOUS));
  let handle: DbHandle | undefined;
  try {
    handle = await createDb(config);
    await sql`select 1`.execute(handle.db); // unreachable: said as such, not as missing migrations
    const pending = await pendingMigrations(handle.db).catch(() => null);
    if (!pending || pending.length) {
      const which = pending ? `lacks migrations of this release (${pending.join(', ')})` : 'is not migrated';
      io.err(`${PREFIX} the database ${which}: run npm run migrate, or start the service, first`);
      return 1;
    }
    // the start's own check: this command may not write what the service's processes cannot read, nor run without
    // a key the data needs; re-encrypting records the current key, as a start does
    await verifyDataKey(handle.db, cipher, config.DATA_ENCRYPTION_KEY ? 'configured' : encryptionKeyFile(config.DATA_DIR), { record: !check });
    let shown = Date.now();
    const report = await reencryptData(handle.db, cipher, {
      check,
      batchSize,
      onBatch: ({ table, read }) => {
        if (Date.now() - shown < 5_000) return;
        shown = Date.now();
        io.err(`${PREFIX} ${table}: ${read} rows read`);
      },
    });
    io.out(JSON.stringify(report, null, 2));
    return report.unreadable || (!check && report.previous_keys_needed) ? 1 : 0;
  } catch (err) {
    // one line, as a start says it (the key to fix, or the database's own reason); a start failure's prefix dropped
    io.err(`${PREFIX} ${err instanceof StartFailure ? err.message.replace(/^ere-gateway cannot start: /, '') : reasonOf(err)}`);
    return 1;
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

function usage(io: CliIo, message: string): number {
  io.err(`${PREFIX} ${message}\nRun "npm run admin -- --help" for the commands.`);
  return 2;
}
