// Migrations: applied once, in order, by concurrent starters (the Migrator's advisory lock on PostgreSQL).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/database.ts';
import { listMigrationFiles, migrate, MIGRATIONS_DIR, pendingMigrations } from '../../src/db/migrate.ts';
import { createTestDb } from '../helpers/db.ts';
import { freshDatabase } from '../../bench/fresh-db.ts';

describe('migrations', () => {
  it('file names have a fixed 4-digit prefix and are unique by number', () => {
    const files = listMigrationFiles();
    expect(files[0]).toBe('0001_core.sql');
    const numbers = files.map((f) => f.slice(0, 4));
    expect(new Set(numbers).size).toBe(numbers.length);
  });

  if (process.env.DATABASE_URL) {
    it('two processes migrating one fresh PostgreSQL database at once apply each migration once', async () => {
      const fresh = await freshDatabase(process.env.DATABASE_URL!, 'ere_mig');
      const [h1, h2] = await Promise.all([createDb({ DATABASE_URL: fresh.url }), createDb({ DATABASE_URL: fresh.url })]);
      try {
        const [r1, r2] = await Promise.all([migrate(h1.db), migrate(h2.db)]);
        const files = listMigrationFiles().map((f) => f.replace(/\.sql$/, ''));
        expect([...r1, ...r2].sort()).toEqual([...files].sort());
        expect(r1.filter((m) => r2.includes(m))).toEqual([]);
        expect(await pendingMigrations(h1.db)).toEqual([]);
      } finally {
        await h1.close();
        await h2.close();
        await fresh.drop();
      }
    });

    it("migrations are not cut by the service's statement_timeout (a schema change on a large table takes time)", async () => {
      const fresh = await freshDatabase(process.env.DATABASE_URL!, 'ere_mig');
      // 1 ms: far shorter than creating the schema takes, so every migration would be cancelled under it
      const h = await createDb({ DATABASE_URL: fresh.url, DB_STATEMENT_TIMEOUT_MS: 1 });
      try {
        expect(await migrate(h.db)).toHaveLength(listMigrationFiles().length);
        // the service's own queries still carry the timeout
        const r = await sql<{ statement_timeout: string }>`show statement_timeout`.execute(h.db);
        expect(r.rows[0]!.statement_timeout).toBe('1ms');
      } finally {
        await h.close();
        await fresh.drop();
      }
    });

    it('0061 gives the sessions kept before it the span of their register readings', async () => {
      const fresh = await freshDatabase(process.env.DATABASE_URL!, 'ere_mig');
      // the migrations before 0061, then sessions and readings as the service kept them, then 0061
      const before = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-mig-'));
      for (const f of listMigrationFiles().filter((f) => f < '0061')) fs.copyFileSync(path.join(MIGRATIONS_DIR, f), path.join(before, f));
      const h = await createDb({ DATABASE_URL: fresh.url });
      try {
        await migrate(h.db, before);
        const ids = await sql<{ charger: string; used: string; unused: string }>`
          with c as (insert into chargers (nickname) values ('kept') returning id),
               s as (insert into charging_sessions (charger_id, transaction_id, started_at, last_reading_at)
                     select c.id, t, '2026-03-01T10:00:00Z', case when t = 'used' then '2026-04-02T10:00:00Z'::timestamptz end
                       from c, unnest(array['used', 'unused']) t returning id, transaction_id)
          select (select id from c) as charger, (select id from s where transaction_id = 'used') as used, (select id from s where transaction_id = 'unused') as unused`.execute(h.db);
        const { charger, used, unused } = ids.rows[0]!;
        await sql`insert into meter_readings (charger_id, session_id, connector_id, measured_at, measurand, phase, wh) values
          (${charger}, ${used}, 1, '2026-02-28T23:00:00Z', 'Energy.Active.Import.Register', 'L1', 1),
          (${charger}, ${used}, 1, '2026-02-28T23:30:00Z', 'Current.Import', '', 16),
          (${charger}, ${used}, 1, '2026-03-01T09:59:00Z', 'Energy.Active.Import.Register', '', 1000),
          (${charger}, ${used}, 1, '2026-04-02T10:00:00Z', 'Energy.Active.Import.Register', '', 9000)`.execute(h.db);
        // 0061 and what came after it
        expect(await migrate(h.db)).toEqual(listMigrationFiles().filter((f) => f >= '0061').map((f) => f.replace(/\.sql$/, '')));
        const rows = await h.db.selectFrom('charging_sessions').select(['id', 'first_reading_at', 'last_reading_at']).execute();
        const byId = new Map(rows.map((r) => [r.id, [r.first_reading_at?.toISOString() ?? null, r.last_reading_at?.toISOString() ?? null]]));
        // the phase-less register readings only: a phase's or another measurand's time is not the span
        expect(byId.get(used)).toEqual(['2026-03-01T09:59:00.000Z', '2026-04-02T10:00:00.000Z']);
        expect(byId.get(unused)).toEqual([null, null]);
      } finally {
        await h.close();
        fs.rmSync(before, { recursive: true, force: true });
        await fresh.drop();
      }
    });
  } else {
    it('migrating an up-to-date PGlite database again applies nothing', async () => {
      const h = await createTestDb(); // a copy of the template that global-setup migrated
      try {
        expect(await migrate(h.db)).toEqual([]);
        expect(await pendingMigrations(h.db)).toEqual([]);
      } finally {
        await h.close();
      }
    });
  }
});
