// D153: every process on one database must hold the key its data was encrypted with (C0.6). A process whose key is
// another one started and then answered 500 on every encrypted value (a mandate link made on machine A, posted again
// on B). The database keeps a check of its key (migration 0071): the first start records it, every start compares.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Cipher } from '../../lib/iban-crypto.ts';
import { StartFailure } from '../../lib/start-failure.ts';

// the check is a MAC of this label under the key (the cipher's MAC key is derived from the data key): it tells two
// keys apart and gives nothing about the key away
const LABEL = 'ere-gateway data key check v1';

/** Record this key's check on a database that has none; throw a StartFailure when the database holds another key's. */
export async function verifyDataKey(db: Db, cipher: Cipher, keySource: 'configured' | string): Promise<void> {
  const mine = cipher.mac(LABEL);
  // two processes starting at once on a new database: one insert wins, and both compare against the winner
  await sql`insert into data_key_check (key_check) values (${mine}) on conflict (id) do nothing`.execute(db);
  const { rows } = await sql<{ key_check: string }>`select key_check from data_key_check where id`.execute(db);
  if (rows[0]?.key_check === mine) return;
  const how =
    keySource === 'configured'
      ? 'set the DATA_ENCRYPTION_KEY the other processes on this database use'
      : `this process generated its own key into ${keySource}; every process on one database needs the same ` +
        'DATA_ENCRYPTION_KEY (or the same DATA_DIR key file)';
  throw new StartFailure('DATA_ENCRYPTION_KEY', `the database's data is encrypted with another key; ${how}`);
}
