// D132: the service's connections run without JIT compilation (a planner's overestimate cost 250–300 ms of compiling
// for an 8 ms statement); a connection string's own `options` still apply, after ours. D244: and READ COMMITTED, in the
// same `options` (test/db/connections.test.ts checks it on a serializable database).
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb, withServiceOptions } from '../../src/db/database.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';

describe('JIT on the service connections (D132)', () => {
  it('keeps the connection string but moves its options after jit=off', () => {
    // D265: and the server's TCP keepalive on them (a dead client's backend, and its locks, gone in about 2 minutes)
    const ours = '-c jit=off -c default_transaction_isolation=read\\ committed -c tcp_keepalives_idle=60 -c tcp_keepalives_interval=10 -c tcp_keepalives_count=6';
    expect(withServiceOptions('postgresql://u@h:5432/db')).toEqual({ connectionString: 'postgresql://u@h:5432/db', options: ours });
    const own = withServiceOptions('postgresql://u@h:5432/db?sslmode=disable&options=-c%20jit%3Don%20-c%20work_mem%3D8MB');
    expect(own.options).toBe(`${ours} -c jit=on -c work_mem=8MB`);
    expect(own.connectionString).toBe('postgresql://u@h:5432/db?sslmode=disable');
    expect(withServiceOptions('host=h dbname=db')).toEqual({ connectionString: 'host=h dbname=db', options: ours });
  });

  describe.runIf(!!process.env.DATABASE_URL)('on PostgreSQL', () => {
    let test: TestDb;
    afterAll(async () => test?.close());
    it('every pooled connection has jit off', async () => {
      test = await createTestDb();
      const h = await createDb({ DATABASE_URL: test.url! });
      try {
        const rows = await Promise.all([1, 2, 3].map(() => sql<{ jit: string }>`select current_setting('jit') as jit`.execute(h.db)));
        expect(rows.map((r) => r.rows[0]!.jit)).toEqual(['off', 'off', 'off']);
      } finally {
        await h.close();
      }
    });
  });
});
