// Issue 10 item 7: a POST /v1/sessions:batch item's connection is checked inside the transaction that writes its
// month (row read FOR SHARE). An archive that lands after the item's target was resolved and before its month is
// written makes the item `connection_not_active`, and no month is written. Batches and corrections of one
// connection take their locks in one order (connection row, then its months) and never deadlock.
import pg from 'pg';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordSessionsBatch } from '../../src/domain/energy/sessions-batch.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
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

const post = (items: unknown[]) => svc.app.inject({ method: 'POST', url: '/v1/sessions:batch', headers: bearer(token), payload: { items } });
const monthsOf = (connectionId: string) => svc.deps.db.selectFrom('energy_months').select('month').where('connection_id', '=', connectionId).execute();
const archive = (connectionId: string) => svc.deps.db.updateTable('connections').set({ status: 'archived' }).where('id', '=', connectionId).execute();

/** Runs `hook` once, right after the first SELECT the batch makes (its target lookup) has returned. */
class AfterFirstSelect implements KyselyPlugin {
  private first: unknown = null;
  private fired = false;
  constructor(private readonly hook: () => Promise<unknown>) {}
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.first === null && args.node.kind === 'SelectQueryNode') this.first = args.queryId;
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (!this.fired && args.queryId === this.first) {
      this.fired = true;
      await this.hook();
    }
    return args.result;
  }
}

describe('sessions:batch checks the connection in its write transaction', () => {
  it('the batch and connections:update on one connection, 15 times at once: no deadlock, both answered', async () => {
    for (let i = 0; i < 15; i++) {
      const a = await anAccount(svc, partner);
      const [b, u] = await Promise.all([
        post([
          { connection_id: a.connection_id, month: '2026-01', kwh: 10 + i },
          { connection_id: a.connection_id, month: '2026-02', kwh: 20 + i },
        ]),
        svc.app.inject({ method: 'POST', url: '/v1/connections:update', headers: bearer(token), payload: { connection_id: a.connection_id, connection: { ean_code: anEan() } } }),
      ]);
      expect([b.statusCode, u.statusCode]).toEqual([200, 200]);
      expect(b.json().counts.created).toBe(2);
    }
  });

  if (process.env.DATABASE_URL) {
    it('an archive committed between the lookup and the write: the item is rejected, no month is written', async () => {
      const a = await anAccount(svc, partner);
      const other = await anAccount(svc, partner);
      const hooked = { ...svc.deps, db: svc.deps.db.withPlugin(new AfterFirstSelect(() => archive(a.connection_id))) };
      const out = await recordSessionsBatch(hooked, partner.partnerId, [
        { connection_id: a.connection_id, month: '2026-03', kwh: 42 },
        { connection_id: other.connection_id, month: '2026-03', kwh: 7 },
      ]);
      expect(out.results.map((r) => [r.status, r.error ?? null])).toEqual([
        ['rejected', 'connection_not_active'],
        ['created', null],
      ]);
      expect(await monthsOf(a.connection_id)).toEqual([]);
      expect(await monthsOf(other.connection_id)).toEqual([{ month: '2026-03' }]);
    });

    it('over HTTP: an archive in flight when the batch writes is waited for, and then rejects the item', async () => {
      const a = await anAccount(svc, partner);
      const c = new pg.Client({ connectionString: svc.testDb.url });
      await c.connect();
      try {
        await c.query('begin');
        await c.query(`update connections set status = 'archived' where id = $1`, [a.connection_id]);
        let answered = false;
        const pending = post([{ connection_id: a.connection_id, month: '2026-04', kwh: 5 }]).finally(() => (answered = true));
        for (let i = 0; i < 500 && !answered; i++) {
          await c.query('select pg_stat_clear_snapshot()'); // the statistics snapshot lasts a transaction otherwise
          const r = await c.query(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
          if (r.rowCount) break;
          await new Promise((res) => setTimeout(res, 20));
        }
        await c.query('commit');
        const res = await pending;
        expect(res.statusCode).toBe(200);
        expect(res.json().results).toEqual([{ index: 0, connection_id: a.connection_id, month: '2026-04', kwh: 5, status: 'rejected', error: 'connection_not_active' }]);
      } finally {
        await c.end();
      }
      expect(await monthsOf(a.connection_id)).toEqual([]);
    });
  }
});
