// D251: step 3 of a key rotation. Every encrypted value (IBANs, mandate-link tokens) is read in small batches by id
// and written again under the current key. The write is a compare-and-set on the value that was read, so the service
// may run meanwhile (a value it changed is read again) and two runs may overlap (the second finds its rows current);
// a run stopped halfway is resumed by running it again (rows already current are counted, not rewritten). A value no
// configured key decrypts is counted and named by its row, never fatal. At the end, under the lock that process
// starts take, nothing but the rows named unreadable may still be under another key: then the database's record of
// keys (data_keys) keeps only the current one, and the old keys may be dropped from every process's configuration.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Cipher } from '../../lib/iban-crypto.ts';
import { KEY_CHECK_LABEL, keyName, type RecordedKey } from './data-key-check.ts';

/** Every encrypted column: table and column names are constants, never input. */
export const ENCRYPTED_COLUMNS = [
  { table: 'accounts', column: 'iban_encrypted' },
  { table: 'mandate_links', column: 'token_encrypted' },
] as const;

type Target = (typeof ENCRYPTED_COLUMNS)[number];

/** At most this many unreadable rows are named (all are counted). */
export const UNREADABLE_NAMED = 1000;

export interface ReencryptReport {
  /** check: read and count only, write nothing */
  mode: 'reencrypt' | 'check';
  /** the id of the key everything is (to be) encrypted with */
  current_key: string;
  /** rows written under the current key by this run (check: rows that would be) */
  re_encrypted: number;
  /** rows that were under the current key already */
  already_current: number;
  /** rows no configured key decrypts; named in unreadable_rows */
  unreadable: number;
  unreadable_rows: Array<{ table: string; id: string; reason: string }>;
  /** readable rows found under each key other than the current one (by key id), as first read */
  under_previous_keys: Record<string, number>;
  /** whether anything in the database (other than the unreadable rows) still needs a key other than the current one */
  previous_keys_needed: boolean;
  /** the keys the database records its data may be encrypted with, after the run */
  keys_in_use: string[];
  summary: string;
}

export interface ReencryptOptions {
  check?: boolean;
  batchSize?: number;
  /** called after every batch (progress) */
  onBatch?: (p: { table: string; read: number }) => void;
}

const q = (t: Target) => ({ table: sql.table(t.table), column: sql.ref(t.column) });

export async function reencryptData(db: Db, cipher: Cipher, opts: ReencryptOptions = {}): Promise<ReencryptReport> {
  const check = opts.check ?? false;
  const batch = opts.batchSize ?? 200;
  const r = { re_encrypted: 0, already_current: 0, unreadable: 0 };
  const unreadableRows: ReencryptReport['unreadable_rows'] = [];
  const unreadableIds = new Map<string, string[]>();
  const underPrevious: Record<string, number> = {};

  for (const t of ENCRYPTED_COLUMNS) {
    const { table, column } = q(t);
    let after: string | null = null;
    let read = 0;
    for (;;) {
      const page: Array<{ id: string; value: string }> = (
        await sql<{ id: string; value: string }>`select id::text as id, ${column} as value from ${table}
          where ${column} is not null ${after === null ? sql`` : sql`and id > ${after}::uuid`}
          order by id limit ${batch}`.execute(db)
      ).rows;
      if (!page.length) break;
      after = page[page.length - 1]!.id;
      read += page.length;
      let todo = page;
      // a value changed between the read and the write (the service stored another IBAN, another run re-encrypted
      // it) is read again; a few rounds, then left for the final count to judge
      for (let round = 0; todo.length && round < 5; round++) {
        const writes: Array<{ id: string; old: string; next: string }> = [];
        for (const row of todo) {
          let opened: ReturnType<Cipher['open']>;
          try {
            opened = cipher.open(row.value);
          } catch (err) {
            r.unreadable++;
            if (!unreadableIds.has(t.table)) unreadableIds.set(t.table, []);
            unreadableIds.get(t.table)!.push(row.id);
            if (unreadableRows.length < UNREADABLE_NAMED) unreadableRows.push({ table: t.table, id: row.id, reason: (err as Error).message });
            continue;
          }
          if (opened.current) {
            r.already_current++;
            continue;
          }
          if (round === 0 && opened.keyId !== cipher.keyId) underPrevious[opened.keyId] = (underPrevious[opened.keyId] ?? 0) + 1;
          writes.push({ id: row.id, old: row.value, next: cipher.encrypt(opened.plain) });
        }
        if (check) {
          r.re_encrypted += writes.length;
          break;
        }
        const done = new Set(await compareAndSet(db, t, writes));
        r.re_encrypted += done.size;
        const lost = writes.filter((w) => !done.has(w.id)).map((w) => w.id);
        todo = lost.length
          ? (await sql<{ id: string; value: string }>`select id::text as id, ${column} as value from ${table}
              where id = any(${lost}::uuid[]) and ${column} is not null`.execute(db)).rows
          : [];
      }
      opts.onBatch?.({ table: t.table, read });
    }
  }

  const retired = check ? null : await retireOldKeys(db, cipher, unreadableIds);
  const keys = (await sql<RecordedKey>`select key_check, key_id from data_keys order by recorded_at, key_check`.execute(db)).rows;
  // check: data under another key, or a record of one (a start without it is refused until a run retires it)
  const currentCheck = cipher.keys(KEY_CHECK_LABEL).find((k) => k.current)!.mac;
  const recordsOthers = keys.some((k) => k.key_check !== currentCheck);
  const needed = retired ?? (Object.keys(underPrevious).length > 0 || recordsOthers);
  const report: Omit<ReencryptReport, 'summary'> = {
    mode: check ? 'check' : 'reencrypt',
    current_key: cipher.keyId,
    ...r,
    unreadable_rows: unreadableRows,
    under_previous_keys: underPrevious,
    previous_keys_needed: needed,
    keys_in_use: keys.map((k) => k.key_id ?? keyName(k)),
  };
  return { ...report, summary: summaryOf(report, keys.filter((k) => k.key_check !== currentCheck).map(keyName)) };
}

/** One statement per batch: each row is written only where it still holds the value that was read. */
async function compareAndSet(db: Db, t: Target, writes: Array<{ id: string; old: string; next: string }>): Promise<string[]> {
  if (!writes.length) return [];
  const { table, column } = q(t);
  const values: RawBuilder<unknown>[] = writes.map((w) => sql`(${w.id}::uuid, ${w.old}::text, ${w.next}::text)`);
  const { rows } = await sql<{ id: string }>`update ${table} as t set ${column} = v.next
    from (values ${sql.join(values)}) as v(id, old, next)
    where t.id = v.id and t.${column} = v.old
    returning t.id::text as id`.execute(db);
  return rows.map((x) => x.id);
}

/**
 * Under the lock process starts take (so none records a key in between): count what is still not under the current
 * key, besides the rows no key decrypts; when nothing is, the record keeps only the current key. Returns whether
 * anything still needs another key.
 */
async function retireOldKeys(db: Db, cipher: Cipher, unreadable: Map<string, string[]>): Promise<boolean> {
  const prefix = `v2:${cipher.keyId}:`;
  const current = cipher.keys(KEY_CHECK_LABEL).find((k) => k.current)!;
  return db.transaction().execute(async (trx) => {
    await sql`lock table data_keys in share row exclusive mode`.execute(trx);
    let remaining = 0;
    for (const t of ENCRYPTED_COLUMNS) {
      const { table, column } = q(t);
      const skip = unreadable.get(t.table) ?? [];
      const { rows } = await sql<{ n: string }>`select count(*)::text as n from ${table}
        where ${column} is not null and not starts_with(${column}, ${prefix}) and not starts_with(${column}, 'v1:')
          and not (id = any(${skip}::uuid[]))`.execute(trx);
      remaining += Number(rows[0]?.n ?? 0);
      // the first format names no key (a process without previous keys writes it, D251): its tag tells whose it is
      const v1 = await sql<{ value: string }>`select ${column} as value from ${table}
        where starts_with(${column}, 'v1:') and not (id = any(${skip}::uuid[]))`.execute(trx);
      for (const row of v1.rows) {
        try {
          if (!cipher.open(row.value).current) remaining++;
        } catch {
          remaining++;
        }
      }
    }
    if (remaining > 0) return true;
    await sql`insert into data_keys (key_check, key_id) values (${current.mac}, ${current.keyId}) on conflict (key_check) do nothing`.execute(trx);
    await sql`delete from data_keys where key_check <> ${current.mac}`.execute(trx);
    return false;
  });
}

function summaryOf(r: Omit<ReencryptReport, 'summary'>, others: string[]): string {
  const counts =
    r.mode === 'check'
      ? `to re-encrypt ${r.re_encrypted}, already current ${r.already_current}, unreadable ${r.unreadable}`
      : `re-encrypted ${r.re_encrypted}, already current ${r.already_current}, unreadable ${r.unreadable}`;
  const unreadable = r.unreadable
    ? `; ${r.unreadable} row(s) no configured key decrypts (unreadable_rows names them): fix or clear them, a key this ` +
      'process lacks will not open them'
    : '';
  const keys = r.previous_keys_needed
    ? r.mode === 'check'
      ? Object.keys(r.under_previous_keys).length
        ? `; data is still under ${Object.keys(r.under_previous_keys).map((k) => `key ${k}`).join(', ')}: keep those keys in ` +
          'DATA_ENCRYPTION_KEYS_PREVIOUS and run reencrypt-data'
        : `; nothing readable is under another key, but the database still records ${others.join(', ')} as in use (a ` +
          'process may encrypt with it): keep it in DATA_ENCRYPTION_KEYS_PREVIOUS and run reencrypt-data without --check ' +
          'once every process encrypts with the current key'
      : '; something was still written under another key during the run (a process not yet switched to the current ' +
        'key?): keep the previous keys configured and run reencrypt-data again once every process encrypts with ' +
        `key ${r.current_key}`
    : r.mode === 'check'
      ? `; nothing readable needs a key other than the current one (key ${r.current_key})`
      : `; nothing in the database needs a key other than the current one (key ${r.current_key}): the previous keys ` +
        'can be dropped from DATA_ENCRYPTION_KEYS_PREVIOUS (step 4)';
  return counts + keys + unreadable;
}
