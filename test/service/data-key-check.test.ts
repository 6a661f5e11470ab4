// D153: every process on one database must hold the key its data was encrypted with. The first start records a
// check of its key in the database; a process with another key refuses to start (one line naming
// DATA_ENCRYPTION_KEY, exit 1) instead of answering 500 on every encrypted value. D251: the database records every key
// its data may be under; a rotation's configurations (the old key as a previous one) start, a process without one of
// those keys is refused.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createCipher } from '../../src/lib/iban-crypto.ts';
import { createTestDb } from '../helpers/db.ts';
import { startServiceProcess, nodeArgs } from '../helpers/service-process.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const base = { JOBS_ENABLED: 'false', LOG_LEVEL: 'warn' };
const tmp = tempDirs('ere-keycheck-');

async function refused(env: Record<string, string>): Promise<{ code: number; out: string }> {
  return promisify(execFile)(process.execPath, nodeArgs('src/main.ts'), {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...base, ...env },
    timeout: 90_000,
  }).then(
    (r) => ({ code: 0, out: r.stdout + r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout + e.stderr }),
  );
}

describe('D153: one data-encryption key per database', () => {
  it('a configured key other than the one the data was encrypted with is refused; the right one starts', { timeout: 180_000 }, async () => {
    const dataDir = tmp();
    const first = await startServiceProcess({ ...base, DATA_DIR: dataDir });
    expect(await first.kill('SIGTERM')).toBe(0);
    const generated = fs.readFileSync(path.join(dataDir, 'data-encryption.key'), 'utf8').trim();

    const other = crypto.randomBytes(32).toString('base64');
    const r = await refused({ DATA_DIR: dataDir, DATA_ENCRYPTION_KEY: other });
    expect(r.code, r.out).toBe(1);
    expect(r.out).toContain("cannot start: DATA_ENCRYPTION_KEY: the database's data is encrypted with another key");
    expect(r.out).not.toMatch(/^\s+at /m);
    expect(r.out).not.toContain(other); // the key itself is never printed

    const same = await startServiceProcess({ ...base, DATA_DIR: dataDir, DATA_ENCRYPTION_KEY: generated });
    expect((await fetch(`${same.url}/readyz`)).status).toBe(200);
    expect(await same.kill('SIGTERM')).toBe(0);
  });

  it('D251: a rotation\'s configurations start (the old key as a previous one); without a key the data needs a start is refused', { timeout: 240_000 }, async () => {
    const dataDir = tmp();
    const first = await startServiceProcess({ ...base, DATA_DIR: dataDir });
    expect(await first.kill('SIGTERM')).toBe(0);
    const generated = fs.readFileSync(path.join(dataDir, 'data-encryption.key'), 'utf8').trim();
    const next = crypto.randomBytes(32).toString('base64');
    const outputs: string[] = [];

    // step 2 of a rotation (the next key current, the generated one previous) starts on the generated key's data
    // (step 1, the other way round, in test/service/key-rotation.test.ts)
    const p = await startServiceProcess({ ...base, DATA_DIR: dataDir, DATA_ENCRYPTION_KEY: next, DATA_ENCRYPTION_KEYS_PREVIOUS: generated });
    expect((await fetch(`${p.url}/readyz`)).status).toBe(200);
    expect(await p.kill('SIGTERM')).toBe(0);
    outputs.push(p.output());
    // the next key alone: the data is still under the generated one (nothing re-encrypted it), refused naming it by id
    const alone = await refused({ DATA_DIR: dataDir, DATA_ENCRYPTION_KEY: next });
    expect(alone.code, alone.out).toBe(1);
    const id = createCipher(Buffer.from(generated, 'base64')).keyId;
    expect(alone.out).toContain(`cannot start: DATA_ENCRYPTION_KEYS_PREVIOUS: the database's data is also encrypted with key ${id}, which this process does not hold`);
    // a previous key that is not a key: one configuration line naming the variable, never its value
    const bad = await refused({ DATA_DIR: dataDir, DATA_ENCRYPTION_KEY: next, DATA_ENCRYPTION_KEYS_PREVIOUS: `${generated},not-a-key` });
    expect(bad.code, bad.out).toBe(1);
    expect(bad.out).toContain('DATA_ENCRYPTION_KEYS_PREVIOUS: entry 2 of 2 must be 32 bytes, base64 encoded');
    for (const out of [...outputs, alone.out, bad.out]) {
      expect(out).not.toContain(generated);
      expect(out).not.toContain(next);
      expect(out).not.toContain('not-a-key');
      expect(out).not.toMatch(/^\s+at /m);
    }
  });

  if (process.env.DATABASE_URL) {
    it('D251: a database keyed before rotation (0071\'s one check) keeps its key: the old key and a rotation from it start, another key is refused', { timeout: 240_000 }, async () => {
      const db = await createTestDb();
      const old = crypto.randomBytes(32);
      const next = crypto.randomBytes(32).toString('base64');
      // the database as the release before this one left it: migrations up to 0083, the check of its key in 0071's table
      const macKey = crypto.createHmac('sha256', old).update('ere-gateway mac v1').digest();
      const check = crypto.createHmac('sha256', macKey).update('ere-gateway data key check v1').digest('base64url');
      await sql`drop table if exists data_keys`.execute(db.db);
      await sql`delete from kysely_migration where name >= '0084'`.execute(db.db);
      await sql`create table if not exists data_key_check (id boolean primary key default true check (id), key_check text not null, recorded_at timestamptz not null default now())`.execute(db.db);
      await sql`insert into data_key_check (key_check) values (${check})`.execute(db.db);
      await db.close();
      const on = { DATABASE_URL: db.url!, DATA_DIR: tmp() };
      const other = await refused({ ...on, DATA_ENCRYPTION_KEY: next });
      expect(other.code, other.out).toBe(1);
      expect(other.out).toContain("cannot start: DATA_ENCRYPTION_KEY: the database's data is encrypted with another key");
      const rotating = await startServiceProcess({ ...base, ...on, DATA_ENCRYPTION_KEY: next, DATA_ENCRYPTION_KEYS_PREVIOUS: old.toString('base64') });
      expect((await fetch(`${rotating.url}/readyz`)).status).toBe(200);
      expect(await rotating.kill('SIGTERM')).toBe(0);
      const alone = await refused({ ...on, DATA_ENCRYPTION_KEY: next });
      expect(alone.code, alone.out).toBe(1);
      expect(alone.out).toContain(`the database's data is also encrypted with key ${createCipher(old).keyId}`);
      for (const out of [other.out, alone.out, rotating.output()]) {
        expect(out).not.toContain(next);
        expect(out).not.toContain(old.toString('base64'));
      }
    });

    it('two sandbox processes on one database with their own DATA_DIRs: the second, with its own generated key, is refused', { timeout: 180_000 }, async () => {
      const db = await createTestDb();
      await db.close();
      const a = await startServiceProcess({ ...base, DATABASE_URL: db.url!, DATA_DIR: tmp() });
      try {
        const dirB = tmp();
        const r = await refused({ DATABASE_URL: db.url!, DATA_DIR: dirB });
        expect(r.code, r.out).toBe(1);
        expect(r.out).toContain('every process on one database needs the same DATA_ENCRYPTION_KEY (or the same DATA_DIR key file)');
        expect(r.out).toContain(path.join(dirB, 'data-encryption.key'));
        expect(a.alive()).toBe(true);
      } finally {
        await a.kill('SIGTERM');
      }
    });
  }
});
