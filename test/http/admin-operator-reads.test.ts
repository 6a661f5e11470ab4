// The operator's reads (D166–D167): the ERE ledger's allocations and payouts, held sessions a page at a time, and
// the whole fleet's quarantine, each read back through the admin API after it was written through the same API
// (or, for sessions and quarantined frames, set up as the ingest leaves them).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { bearer } from '../helpers/factories.ts';
import { aCharger, anAccountWithConnection, anEnergyMonth, aSession } from '../helpers/energy-factories.ts';
import { quarantineMessage, quarantineParts } from '../../src/domain/charging/quarantine.ts';

let svc: TestService;
const admin = bearer(TEST_ADMIN_TOKEN);
const clock = testClock('2026-11-22T10:00:00Z');

beforeAll(async () => {
  svc = await createTestService({ clock, env: { ERE_FEE_PCT: '15', RENEWABLE_SHARE: '2026:0.505' } });
});
afterAll(() => svc.close());

const post = (url: string, payload: unknown = {}) => svc.app.inject({ method: 'POST', url, headers: admin, payload: payload as object });
const get = async (url: string) => {
  const r = await svc.app.inject({ method: 'GET', url, headers: admin });
  return { status: r.statusCode, body: r.json() };
};

async function registeredAccount(kwh: string): Promise<string> {
  const a = await anAccountWithConnection(svc.deps, { eligible: true });
  const m = await anEnergyMonth(svc.deps, { connectionId: a.connectionId, month: '2026-05', kwh, sessions: 10 });
  await post(`/admin/energy-months/${m}/review`, { action: 'start' });
  expect((await post(`/admin/energy-months/${m}/review`, { action: 'register' })).json().status).toBe('registered');
  return a.accountId;
}

describe('GET /admin/ere/allocations and /admin/ere/payouts', () => {
  it('reads back what was allocated, released and paid, filtered and a page at a time', async () => {
    const a = await registeredAccount('600.00'); // 600 × 0.332694 = 199.62 ERE
    const b = await registeredAccount('300.00'); // 99.81 ERE
    const sale = (await post('/admin/ere/sales', { quarter: '2026-Q3', ere: 1000, price_per_ere: '0.180' })).json();
    const ids: string[] = [];
    for (const [acc, ere] of [[a, 50], [b, 20], [a, 30], [a, 10]] as const) {
      clock.advance(1000);
      const r = await post(`/admin/ere/sales/${sale.sale_id}/allocations`, { account_id: acc, ere });
      expect(r.statusCode).toBe(201);
      ids.push(r.json().allocation_id);
    }
    clock.advance(1000);
    await post(`/admin/ere/allocations/${ids[0]}/payable`);
    await post(`/admin/ere/allocations/${ids[2]}/payable`);
    clock.advance(1000);
    const paid = await post('/admin/ere/payouts', { account_id: a, reference: 'SEPA-7' });
    expect(paid.statusCode).toBe(201);

    const all = await get(`/admin/ere/allocations?sale_id=${sale.sale_id}`);
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ limit: 100, offset: 0, count: 4 });
    expect(all.body.allocations.map((x: { allocation_id: string }) => x.allocation_id)).toEqual(ids);
    // 50 × 0.180 × 0.85 = 7.65 EUR; paid with allocation 3 under the payout
    expect(all.body.allocations[0]).toEqual({
      allocation_id: ids[0], sale_id: sale.sale_id, account_id: a, compliance_year: 2026, quarter: '2026-Q3', ere: 50,
      price_per_ere: 0.18, fee_pct: 15, net_eur: 7.65, status: 'paid', payout_id: paid.json().payout_id,
      created_at: '2026-11-22T10:00:01Z', payable_at: '2026-11-22T10:00:05Z', paid_at: '2026-11-22T10:00:06Z',
    });
    expect(all.body.allocations[3]).toMatchObject({ account_id: a, ere: 10, status: 'reserved', payout_id: null, payable_at: null, paid_at: null });

    const reservedOfA = await get(`/admin/ere/allocations?account_id=${a}&status=reserved`);
    expect(reservedOfA.body.allocations.map((x: { allocation_id: string }) => x.allocation_id)).toEqual([ids[3]]);
    const page2 = await get(`/admin/ere/allocations?sale_id=${sale.sale_id}&limit=3&offset=3`);
    expect(page2.body).toMatchObject({ limit: 3, offset: 3, count: 4 });
    expect(page2.body.allocations.map((x: { allocation_id: string }) => x.allocation_id)).toEqual([ids[3]]);

    const payouts = await get(`/admin/ere/payouts?account_id=${a}`);
    expect(payouts.body).toEqual({
      payouts: [{ ...paid.json(), reference: 'SEPA-7' }],
      limit: 100,
      offset: 0,
      count: 1,
    });
    expect(paid.json()).toMatchObject({ ere: 80, net_eur: 12.24, allocation_ids: [ids[0], ids[2]] }); // 7.65 + 4.59
    expect((await get('/admin/ere/payouts?reference=SEPA-7')).body.payouts.map((p: { account_id: string }) => p.account_id)).toEqual([a]);
    expect((await get(`/admin/ere/payouts?account_id=${b}`)).body).toEqual({ payouts: [], limit: 100, offset: 0, count: 0 });
  });

  it('answers 400 invalid_request for a malformed filter or page and 401 without the admin token', async () => {
    for (const url of ['/admin/ere/allocations?account_id=nope', '/admin/ere/allocations?status=spent', '/admin/ere/payouts?limit=0', '/admin/ere/payouts?limit=1001', '/admin/ere/allocations?offset=-1']) {
      const r = await get(url);
      expect([url, r.status, r.body.error]).toEqual([url, 400, 'invalid_request']);
    }
    expect((await svc.app.inject({ method: 'GET', url: '/admin/ere/payouts' })).statusCode).toBe(401);
  });
});

describe('GET /admin/sessions/held', () => {
  it('pages through every held session oldest first, of one charger when asked, with the count', async () => {
    const c1 = await aCharger(svc.deps, { mid: true });
    const c2 = await aCharger(svc.deps, { mid: true });
    const made: Array<[string, string]> = [];
    for (let i = 0; i < 5; i++) {
      const day = `2026-10-${String(10 + i).padStart(2, '0')}`;
      const ch = i % 2 === 0 ? c1 : c2;
      const id = await aSession(svc.deps, ch, [[`${day}T08:00:00Z`, 0], [`${day}T09:00:00Z`, 900_000, 'implausible_power']]);
      made.push([id, ch]);
    }
    const before = (await get('/admin/sessions/held?limit=1000')).body;
    const mine = before.sessions.filter((s: { session_id: string }) => made.some(([id]) => id === s.session_id));
    expect(mine.map((s: { session_id: string }) => s.session_id)).toEqual(made.map(([id]) => id));
    expect(before.count).toBe(before.sessions.length);

    const ofC1 = await get(`/admin/sessions/held?charger_id=${c1}&limit=2`);
    expect(ofC1.body).toMatchObject({ limit: 2, offset: 0, count: 3 });
    expect(ofC1.body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([made[0]![0], made[2]![0]]);
    const next = await get(`/admin/sessions/held?charger_id=${c1}&limit=2&offset=2`);
    expect(next.body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([made[4]![0]]);
    expect(next.body.sessions[0]).toMatchObject({ charger_id: c1, kwh: 0, review: { status: 'held', reason: 'implausible_power', held_kwh: 900 } });

    // a decided session leaves the list and the count
    expect((await post(`/admin/sessions/${made[2]![0]}/review`, { decision: 'reject' })).statusCode).toBe(200);
    const after = await get(`/admin/sessions/held?charger_id=${c1}`);
    expect(after.body).toMatchObject({ count: 2 });
    expect(after.body.sessions.map((s: { session_id: string }) => s.session_id)).toEqual([made[0]![0], made[4]![0]]);
    expect((await get('/admin/sessions/held?charger_id=x')).body.error).toBe('invalid_request');
  });
});

describe('GET /admin/quarantine', () => {
  it("lists the fleet's quarantine newest first without the frames, filtered by moment, kind and replay", async () => {
    const c1 = await aCharger(svc.deps, { mid: true });
    const c2 = await aCharger(svc.deps, { mid: true });
    clock.set('2026-11-23T08:00:00Z');
    const m1 = await quarantineMessage(svc.deps, { chargerId: c1, protocol: 'ocpp1.6', action: 'MeterValues', messageId: 'a-1', raw: '[2,"a-1","MeterValues",{"connectorId":1}]', payload: { connectorId: 1 }, reason: 'meterValue missing', ack: {} });
    clock.set('2026-11-23T09:00:00Z');
    const [p1] = await quarantineParts(svc.deps, { chargerId: c2, protocol: 'ocpp2.0.1', action: 'TransactionEvent', messageId: 'b-1', parts: [{ part: { measurand: 'x' }, reason: 'unknown measurand' }] });
    clock.set('2026-11-23T10:00:00Z');
    const m2 = await quarantineMessage(svc.deps, { chargerId: c2, protocol: 'ocpp1.6', action: 'StopTransaction', messageId: 'b-2', raw: '[2,"b-2","StopTransaction",{}]', payload: {}, reason: 'transactionId missing', ack: {} });
    await svc.deps.db.updateTable('ocpp_quarantine').set({ replayed_at: new Date('2026-11-23T11:00:00Z'), replay_result: 'unusable', replay_reason: 'still missing' }).where('id', '=', m2).execute();

    const all = await get('/admin/quarantine?since=2026-11-23T00:00:00Z');
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ limit: 100, offset: 0, count: 3 });
    expect(all.body.messages).toEqual([
      { id: m2, charger_id: c2, kind: 'message', protocol: 'ocpp1.6', action: 'StopTransaction', message_id: 'b-2', raw_chars: '[2,"b-2","StopTransaction",{}]'.length, ack: {}, reason: 'transactionId missing', received_at: '2026-11-23T10:00:00Z', replayed_at: '2026-11-23T11:00:00Z', replay_result: 'unusable', replay_reason: 'still missing' },
      expect.objectContaining({ id: p1, charger_id: c2, kind: 'part', replayed_at: null }),
      expect.objectContaining({ id: m1, charger_id: c1, kind: 'message', raw_chars: '[2,"a-1","MeterValues",{"connectorId":1}]'.length, received_at: '2026-11-23T08:00:00Z' }),
    ]);
    expect(all.body.messages[0]).not.toHaveProperty('raw');
    const ids = async (q: string) => (await get(`/admin/quarantine?since=2026-11-23T00:00:00Z&${q}`)).body.messages.map((m: { id: string }) => m.id);
    expect(await ids('kind=message')).toEqual([m2, m1]);
    expect(await ids('replayed=false')).toEqual([p1, m1]);
    expect(await ids('replayed=true')).toEqual([m2]);
    expect(await ids('limit=1&offset=1')).toEqual([p1]);
    expect((await get('/admin/quarantine?since=2026-11-23T09:30:00%2B01:00')).body.messages.map((m: { id: string }) => m.id)).toEqual([m2, p1]);
    for (const q of ['since=yesterday', 'kind=frame', 'replayed=maybe', 'limit=5000']) {
      expect([q, (await get(`/admin/quarantine?${q}`)).body.error]).toEqual([q, 'invalid_request']);
    }
  });
});
