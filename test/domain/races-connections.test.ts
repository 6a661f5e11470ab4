// Issue 10 item 7: POST /v1/connections:update reads, checks and writes under one row lock. Two concurrent
// corrections never lose each other's fields nor both report a change that only one made; an archive or an ERE
// registration that lands while a correction is under way is seen by its checks.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { anEnergyMonth } from '../helpers/energy-factories.ts';
import { anAccount, anEan } from '../helpers/onboarding-factories.ts';

let svc: TestService;
let partner: TestPartner;
let token: string;

beforeAll(async () => {
  svc = await createTestService();
  partner = await aPartner(svc.deps);
  token = await partner.cpoToken();
});
afterAll(() => svc?.close());

const update = (payload: unknown) => svc.app.inject({ method: 'POST', url: '/v1/connections:update', headers: bearer(token), payload: payload as object });
const conn = (id: string) => svc.deps.db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('connections:update under one row lock', () => {
  it('two concurrent corrections of different fields both land (no lost update), 20 times over', async () => {
    for (let i = 0; i < 20; i++) {
      const a = await anAccount(svc, partner);
      const [r1, r2] = await Promise.all([
        update({ connection_id: a.connection_id, connection: { street: `Nieuwe Straat ${i}` } }),
        update({ connection_id: a.connection_id, connection: { city: `Nieuwegein ${i}` } }),
      ]);
      expect([r1.statusCode, r2.statusCode]).toEqual([200, 200]);
      expect([r1.json().changed, r2.json().changed]).toEqual([true, true]);
      const row = await conn(a.connection_id);
      expect({ street: row.street, city: row.city }).toEqual({ street: `Nieuwe Straat ${i}`, city: `Nieuwegein ${i}` });
    }
  });

  it('the same correction sent twice at once: one answers changed, the other unchanged (rule 4 on the locked row), 20 times over', async () => {
    for (let i = 0; i < 20; i++) {
      const a = await anAccount(svc, partner);
      const ean = anEan();
      const body = { connection_id: a.connection_id, connection: { ean_code: ean } };
      const answers = await Promise.all([update(body), update(body)]);
      expect(answers.map((r) => r.statusCode)).toEqual([200, 200]);
      expect(answers.map((r) => r.json().changed).sort()).toEqual([false, true]);
      expect((await conn(a.connection_id)).ean_code).toBe(ean);
    }
  });

  if (process.env.DATABASE_URL) {
    it('an archive committed while a correction waits for the row: connection_not_active, nothing written', async () => {
      const a = await anAccount(svc, partner);
      const res = await whileHeld(`update connections set status = 'archived' where id = '${a.connection_id}'`, 'select %from "connections"%for update', () =>
        update({ connection_id: a.connection_id, connection: { street: 'Te Laat' } }),
      );
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toBe('connection_not_active');
      expect((await conn(a.connection_id)).street).not.toBe('Te Laat');
    });

    it('a month registered as ERE while a correction is under way: ere_booked, the EAN stays', async () => {
      const a = await anAccount(svc, partner);
      const month = await anEnergyMonth(svc.deps, { connectionId: a.connection_id, month: '2026-01', kwh: '100.00' });
      const res = await whileHeld(`update energy_months set status = 'registered' where id = '${month}'`, 'select "status" from "energy_months"%', () =>
        update({ connection_id: a.connection_id, connection: { ean_code: anEan() } }),
      );
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toBe('ere_booked');
      expect((await conn(a.connection_id)).ean_code).toBe(a.ean_code);
    });
  }
});

/**
 * Runs `statement` in an open transaction of its own, starts `request`, waits until the request's backend waits
 * for that transaction's lock in a statement like `waitsIn` (or the request is answered), then commits.
 */
async function whileHeld<T>(statement: string, waitsIn: string, request: () => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: svc.testDb.url });
  await c.connect();
  try {
    await c.query('begin');
    await c.query(statement);
    let answered = false;
    const pending = request().finally(() => (answered = true));
    for (let i = 0; i < 500 && !answered; i++) {
      await c.query('select pg_stat_clear_snapshot()'); // the statistics snapshot lasts a transaction otherwise
      const r = await c.query(
        `select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like $1`,
        [waitsIn],
      );
      if (r.rowCount) break;
      await new Promise((res) => setTimeout(res, 20));
    }
    await c.query('commit');
    return await pending;
  } finally {
    await c.end();
  }
}
