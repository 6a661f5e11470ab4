// D153: every process on one database must hold the keys its data was encrypted with (C0.6). A process whose key is
// another one started and then answered 500 on every encrypted value (a mandate link made on machine A, posted again
// on B). D251: keys rotate, so the database keeps the set of keys its data may be encrypted with (data_keys,
// migration 0084; before it one key in data_key_check, 0071): a start records its current key there (it will write
// with it), and a process that lacks any of them (as its current key or a previous one) is refused. The re-encryption
// (reencrypt.ts) retires the keys nothing is encrypted with any more.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Cipher } from '../../lib/iban-crypto.ts';
import { StartFailure } from '../../lib/start-failure.ts';

// a key's check is a MAC of this label under the key (the cipher's MAC key is derived from the data key): it tells
// two keys apart and gives nothing about the key away; the same label as 0071's single check, so its row carries over
export const KEY_CHECK_LABEL = 'ere-gateway data key check v1';

export interface RecordedKey {
  key_check: string;
  /** null for a key recorded before key ids (0071), until a process that holds it starts */
  key_id: string | null;
}

/** The keys the database records that `cipher` does not hold. */
export function keysNotHeld(recorded: RecordedKey[], cipher: Cipher): RecordedKey[] {
  const mine = cipher.keys(KEY_CHECK_LABEL);
  return recorded.filter((r) => !mine.some((k) => k.mac === r.key_check));
}

/** How a recorded key is named to an operator: its id, or what is known of it. */
export const keyName = (k: RecordedKey): string => (k.key_id ? `key ${k.key_id}` : 'the key recorded before key ids (the first data key)');

/**
 * Throw a StartFailure unless `cipher` holds every key the database's data may be encrypted with. With `record` (a
 * process that will write), its current key is recorded first on a database with none, and added to the set.
 */
export async function verifyDataKey(
  db: Db,
  cipher: Cipher,
  keySource: 'configured' | string,
  opts: { record?: boolean } = {},
): Promise<void> {
  const record = opts.record ?? true;
  await db.transaction().execute(async (trx) => {
    // one start at a time decides: two processes with different keys starting at once on a new database would each
    // find it empty and both record their own (the lock conflicts with itself, not with the service's reads)
    if (record) await sql`lock table data_keys in share row exclusive mode`.execute(trx);
    const { rows } = await sql<RecordedKey>`select key_check, key_id from data_keys order by recorded_at, key_check`.execute(trx);
    const missing = keysNotHeld(rows, cipher);
    if (missing.length) throw refusal(missing, missing.length === rows.length, keySource);
    if (!record) return;
    const mine = cipher.keys(KEY_CHECK_LABEL);
    const current = mine.find((k) => k.current)!;
    await sql`insert into data_keys (key_check, key_id) values (${current.mac}, ${current.keyId}) on conflict (key_check) do nothing`.execute(trx);
    // the carried-over check of 0071 gets its key's id from the first process that holds it
    for (const k of mine) {
      if (rows.some((r) => r.key_check === k.mac && r.key_id === null)) {
        await sql`update data_keys set key_id = ${k.keyId} where key_check = ${k.mac} and key_id is null`.execute(trx);
      }
    }
  });
}

function refusal(missing: RecordedKey[], noneHeld: boolean, keySource: 'configured' | string): StartFailure {
  if (noneHeld) {
    const how =
      keySource === 'configured'
        ? 'set the DATA_ENCRYPTION_KEY the other processes on this database use (rotating keys: the old key stays in ' +
          'DATA_ENCRYPTION_KEYS_PREVIOUS until the re-encryption, docs/platform.md "Rotating the data-encryption key")'
        : `this process generated its own key into ${keySource}; every process on one database needs the same ` +
          'DATA_ENCRYPTION_KEY (or the same DATA_DIR key file)';
    return new StartFailure('DATA_ENCRYPTION_KEY', `the database's data is encrypted with another key; ${how}`);
  }
  return new StartFailure(
    'DATA_ENCRYPTION_KEYS_PREVIOUS',
    `the database's data is also encrypted with ${missing.map(keyName).join(' and ')}, which this process does not hold ` +
      '(another process encrypts with it, or the data was not re-encrypted yet): add it to DATA_ENCRYPTION_KEYS_PREVIOUS; ' +
      'to drop an old key, first run npm run admin -- reencrypt-data once every process encrypts with the new one ' +
      '(docs/platform.md "Rotating the data-encryption key")',
  );
}
