// C2.4 / C6.4 POST /v1/sessions:batch: created, unchanged, updated, every rejection, bounds, races, tenancy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { anAccountWithConnection, anEnergyMonth } from '../helpers/energy-factories.ts';
import { recordSessionsBatch } from '../../src/domain/energy/sessions-batch.ts';

let svc: TestService;
let cpo: TestPartner;
let token: string;

beforeAll(async () => {
  svc = await createTestService({ clock: testClock('2026-11-22T10:00:00Z') });
  cpo = await aPartner(svc.deps);
  token = await cpo.cpoToken();
});
afterAll(() => svc.close());

const post = (items: unknown[], t = token) =>
  svc.app.inject({ method: 'POST', url: '/v1/sessions:batch', headers: bearer(t), payload: { items } });

const rowsOf = (connectionId: string) =>
  svc.deps.db.selectFrom('energy_months').select(['month', 'kwh', 'source', 'status']).where('connection_id', '=', connectionId).orderBy('month').execute();

describe('POST /v1/sessions:batch', () => {
  it('creates, then answers unchanged for the same kWh (after rounding) and updated for another', async () => {
    const { connectionId } = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId });
    const first = await post([
      { connection_id: connectionId, month: '2026-09', kwh: 12.345 },
      { connection_id: connectionId, month: '2026-10', kwh: 100 },
    ]);
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({
      ok: true,
      results: [
        { index: 0, connection_id: connectionId, month: '2026-09', kwh: 12.35, status: 'created' },
        { index: 1, connection_id: connectionId, month: '2026-10', kwh: 100, status: 'created' },
      ],
      counts: { created: 2, updated: 0, unchanged: 0, rejected: 0 },
    });
    const again = await post([
      { connection_id: connectionId, month: '2026-09', kwh: 12.349 },
      { connection_id: connectionId, month: '2026-10', kwh: 101.5 },
    ]);
    expect(again.json().results.map((r: { status: string }) => r.status)).toEqual(['unchanged', 'updated']);
    expect(again.json().counts).toEqual({ created: 0, updated: 1, unchanged: 1, rejected: 0 });
    expect(await rowsOf(connectionId)).toEqual([
      { month: '2026-09', kwh: '12.35', source: 'cpo', status: 'delivered' },
      { month: '2026-10', kwh: '101.50', source: 'cpo', status: 'delivered' },
    ]);
  });

  it('addresses the connection by account_id or cpo_external_ref of the caller', async () => {
    const a = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId, cpoExternalRef: 'K-1001' });
    const res = await post([
      { account_id: a.accountId, month: '2026-08', kwh: 1 },
      { cpo_external_ref: 'K-1001', month: '2026-07', kwh: 2 },
    ]);
    expect(res.json().results).toEqual([
      { index: 0, connection_id: a.connectionId, month: '2026-08', kwh: 1, status: 'created' },
      { index: 1, connection_id: a.connectionId, month: '2026-07', kwh: 2, status: 'created' },
    ]);
    expect((await rowsOf(a.connectionId)).map((r) => r.kwh)).toEqual(['2.00', '1.00']);
  });

  it('a reference that is not UTF-8 text names no account (D112), not one whose stored reference it decodes to', async () => {
    // an account made before D112 with a Latin-1 name stored as U+FFFD; another CPO system sends "Möller" in Latin-1
    const a = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId, cpoExternalRef: 'klant-M\uFFFDller' });
    const res = await svc.app.inject({
      method: 'POST',
      url: '/v1/sessions:batch',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json; charset=iso-8859-1' },
      payload: Buffer.from('{"items":[{"cpo_external_ref":"klant-M\u00f6ller","month":"2026-07","kwh":2}]}', 'latin1'),
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toEqual([{ index: 0, connection_id: null, month: '2026-07', kwh: 2, status: 'rejected', error: 'connection_not_found' }]);
    expect(await rowsOf(a.connectionId)).toEqual([]);
  });

  it('rejects each bad item with its code and still records the good ones', async () => {
    const ok = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId });
    const archived = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId, connectionStatus: 'archived' });
    const other = await anAccountWithConnection(svc.deps, { partnerId: (await aPartner(svc.deps)).partnerId, cpoExternalRef: 'OTHER-1' });
    const two = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId });
    await svc.deps.db
      .insertInto('connections')
      .values({ account_id: two.accountId, ean_code: '871999999999999999', street: 'B', house_number: '2', postal_code: '1011AB', city: 'A' })
      .execute();
    const booked = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId });
    await anEnergyMonth(svc.deps, { connectionId: booked.connectionId, month: '2026-06', kwh: '50.00', status: 'registered', ere: '16.63' });

    const res = await post([
      { connection_id: other.connectionId, month: '2026-10', kwh: 1 }, // another partner's: not found (C2.1)
      { cpo_external_ref: 'OTHER-1', month: '2026-10', kwh: 1 },
      { connection_id: '00000000-0000-4000-8000-000000000000', month: '2026-10', kwh: 1 },
      { account_id: two.accountId, month: '2026-10', kwh: 1 },
      { connection_id: archived.connectionId, month: '2026-10', kwh: 1 },
      { connection_id: ok.connectionId, month: '2026-12', kwh: 1 },
      { connection_id: ok.connectionId, month: '2026-13', kwh: 1 },
      { connection_id: ok.connectionId, month: '2026-1', kwh: 1 },
      { connection_id: ok.connectionId, month: '2025-12', kwh: 1 }, // before the first compliance year: no ERE, no position shows it
      { connection_id: ok.connectionId, month: '2026-10', kwh: -1 },
      { connection_id: ok.connectionId, month: '2026-10', kwh: '5' },
      { connection_id: booked.connectionId, month: '2026-06', kwh: 51 },
      { connection_id: booked.connectionId, month: '2026-06', kwh: 50 }, // C6.4: same kWh is a safe retry
      { month: '2026-10', kwh: 1 },
      { connection_id: ok.connectionId, month: '2026-11', kwh: 7.5 }, // the current month is fine
      'not an item',
      { connection_id: ok.connectionId, month: '0000-01', kwh: 1 }, // a year below 1000 was a 500 for the whole batch
    ]);
    expect(res.statusCode).toBe(200);
    const r = res.json().results as Array<{ status: string; error?: string }>;
    expect(r.map((x) => x.error ?? x.status)).toEqual([
      'connection_not_found',
      'connection_not_found',
      'connection_not_found',
      'ambiguous_connection',
      'connection_not_active',
      'month_in_future',
      'invalid_month',
      'invalid_month',
      'invalid_month',
      'invalid_kwh',
      'invalid_kwh',
      'ere_booked',
      'unchanged',
      'target_required',
      'created',
      'invalid_request',
      'invalid_month',
    ]);
    expect(res.json().counts).toEqual({ created: 1, updated: 0, unchanged: 1, rejected: 15 });
    expect(res.json().results[11]).toEqual({ index: 11, connection_id: booked.connectionId, month: '2026-06', kwh: 51, status: 'rejected', error: 'ere_booked' });
    expect(await rowsOf(ok.connectionId)).toEqual([{ month: '2026-11', kwh: '7.50', source: 'cpo', status: 'delivered' }]);
    expect(await rowsOf(booked.connectionId)).toEqual([{ month: '2026-06', kwh: '50.00', source: 'cpo', status: 'registered' }]);
    expect(await rowsOf(other.connectionId)).toEqual([]);
    expect(await rowsOf(archived.connectionId)).toEqual([]);
  });

  it('a kWh past what the column holds is invalid_kwh on its own item, however large (1e21 has no plain decimal text)', async () => {
    const { connectionId } = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId });
    const res = await post([
      { connection_id: connectionId, month: '2026-10', kwh: 1e21 },
      { connection_id: connectionId, month: '2026-09', kwh: 1.7e308 },
      { connection_id: connectionId, month: '2026-08', kwh: 1e12 },
      { connection_id: connectionId, month: '2026-07', kwh: 1234.56 },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results.map((x: { error?: string; status: string }) => x.error ?? x.status)).toEqual(['invalid_kwh', 'invalid_kwh', 'invalid_kwh', 'created']);
    expect(await rowsOf(connectionId)).toEqual([{ month: '2026-07', kwh: '1234.56', source: 'cpo', status: 'delivered' }]);
  });

  it('a NUL in an item is that item’s rejection, never the batch’s (one bad item never fails the others)', async () => {
    const { connectionId } = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId, cpoExternalRef: 'NUL-OK-1' });
    const res = await post([
      { cpo_external_ref: 'NUL-OK-1\u0000', month: '2026-10', kwh: 1 },
      { connection_id: `${connectionId}\u0000`, month: '2026-10', kwh: 1 },
      { connection_id: connectionId, month: '2026-10\u0000', kwh: 1 },
      { cpo_external_ref: 'NUL-OK-1', month: '2026-09', kwh: 2, ['note\u0000']: 'x' },
    ]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().results.map((x: { error?: string; status: string }) => x.error ?? x.status)).toEqual(['connection_not_found', 'connection_not_found', 'invalid_month', 'created']);
    expect(await rowsOf(connectionId)).toEqual([{ month: '2026-09', kwh: '2.00', source: 'cpo', status: 'delivered' }]);
  });

  it('refuses 0 and 1,001 items with 400 invalid_request and stores nothing', async () => {
    const { connectionId } = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId });
    const items = Array.from({ length: 1001 }, () => ({ connection_id: connectionId, month: '2026-10', kwh: 1 }));
    const big = await post(items);
    expect(big.statusCode).toBe(400);
    expect(big.json().error).toBe('invalid_request');
    const none = await post([]);
    expect(none.statusCode).toBe(400);
    expect(none.json().error).toBe('invalid_request');
    const noItems = await svc.app.inject({ method: 'POST', url: '/v1/sessions:batch', headers: bearer(token), payload: {} });
    expect(noItems.statusCode).toBe(400);
    expect(noItems.json().error).toBe('invalid_request');
    expect(await rowsOf(connectionId)).toEqual([]);
  });

  it('accepts 1,000 items', async () => {
    const { connectionId } = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId });
    // 998 future months are refused without touching the database; two items of one key are written in order
    const items = Array.from({ length: 1000 }, (_, i) => ({ connection_id: connectionId, month: i < 998 ? '2027-01' : '2026-10', kwh: i === 999 ? 4 : 3 }));
    const res = await post(items);
    expect(res.statusCode).toBe(200);
    expect(res.json().results).toHaveLength(1000);
    expect(res.json().counts).toEqual({ created: 1, updated: 1, unchanged: 0, rejected: 998 });
    expect(await rowsOf(connectionId)).toEqual([{ month: '2026-10', kwh: '4.00', source: 'cpo', status: 'delivered' }]);
  });

  it('concurrent posts of the same item leave one row', async () => {
    const { connectionId } = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId });
    const item = { connection_id: connectionId, month: '2026-10', kwh: 42.42 };
    const answers = await Promise.all(Array.from({ length: 6 }, () => post([item])));
    const statuses = answers.map((a) => a.json().results[0].status).sort();
    expect(statuses).toEqual(['created', 'unchanged', 'unchanged', 'unchanged', 'unchanged', 'unchanged']);
    expect(await rowsOf(connectionId)).toEqual([{ month: '2026-10', kwh: '42.42', source: 'cpo', status: 'delivered' }]);
  });

  it('needs the scope cpo:sessions:write', async () => {
    const t = await cpo.cpoToken(['cpo:accounts:read']);
    const res = await post([{ month: '2026-10', kwh: 1 }], t);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'Insufficient scope', required_scope: 'cpo:sessions:write' });
  });

  it('is described in /openapi.json with one colon, beside the other energy routes', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const paths = Object.keys(res.json().paths);
    for (const p of ['/v1/sessions:batch', '/energy', '/ere-position', '/v1/ere-positions', '/admin/energy-months/{id}/review', '/sandbox/connections/{connection_id}/register-ere']) {
      expect(paths).toContain(p);
    }
  });
});

describe('POST /v1/sessions:batch is set-based', () => {
  /** the statements one batch sends to the database, counted by a kysely plugin on the service's own Db */
  async function statementsFor(items: unknown[]): Promise<{ n: number; counts: Record<string, number> }> {
    let n = 0;
    const db = svc.deps.db.withPlugin({
      transformQuery: (args) => {
        n += 1;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const res = await recordSessionsBatch({ ...svc.deps, db }, cpo.partnerId, items);
    return { n, counts: res.counts };
  }

  it('sends as many statements for 1,000 items as for 10, new and replayed', { timeout: 120_000 }, async () => {
    const conns: string[] = [];
    const refs: string[] = [];
    for (let i = 0; i < 100; i++) {
      const a = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId });
      conns.push(a.connectionId);
      const ref = `SET-BASED-${Date.now()}-${i}`;
      await svc.deps.db.updateTable('accounts').set({ cpo_external_ref: ref }).where('id', '=', a.accountId).execute();
      refs.push(ref);
    }
    // 100 connections × 10 months of the first compliance year (months before it are refused)
    const months = ['2026-01', '2026-02', '2026-03', '2026-04', '2026-05', '2026-06', '2026-07', '2026-08', '2026-09', '2026-10'];
    // a third of the items name their connection by the account's cpo_external_ref
    const itemsFor = (count: number, offset: number, kwh: number) =>
      Array.from({ length: count }, (_, k) => {
        const i = k + offset;
        const c = i % conns.length;
        const month = months[Math.floor(i / conns.length) % months.length]!;
        return i % 3 === 0 ? { cpo_external_ref: refs[c], month, kwh } : { connection_id: conns[c], month, kwh };
      });
    const small = await statementsFor(itemsFor(10, 0, 5));
    const large = await statementsFor(itemsFor(1000, 0, 5)); // the first 10 replayed, 990 new
    expect(small.counts).toEqual({ created: 10, updated: 0, unchanged: 0, rejected: 0 });
    expect(large.counts).toEqual({ created: 990, updated: 0, unchanged: 10, rejected: 0 });
    const replay = await statementsFor(itemsFor(1000, 0, 5));
    expect(replay.counts).toEqual({ created: 0, updated: 0, unchanged: 1000, rejected: 0 });
    const changed = await statementsFor(itemsFor(1000, 0, 6));
    expect(changed.counts).toEqual({ created: 0, updated: 1000, unchanged: 0, rejected: 0 });
    expect(large.n).toBeLessThanOrEqual(small.n + 1);
    expect(replay.n).toBeLessThanOrEqual(small.n + 1);
    expect(changed.n).toBeLessThanOrEqual(small.n + 2);
    expect(large.n).toBeLessThan(12);
  });
});
