// D124: a session's Wh count for ERE (GET /sessions) only in a month whose row can carry them, so the session view and
// the months agree to the Wh: not before the first compliance year, not in a month the CPO delivered, and in a
// registered month only what its last computation saw (readings that arrived after it are in no month).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionCredits } from '../../src/domain/charging/session-credits.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aLateReading, anAccountWithConnection, anEnergyMonth, aSession } from '../helpers/energy-factories.ts';
import { aUser, bearer } from '../helpers/factories.ts';

let svc: TestService;
const admin = bearer(TEST_ADMIN_TOKEN);

beforeAll(async () => {
  svc = await createTestService({ clock: testClock('2026-11-22T10:00:00Z'), env: { RENEWABLE_SHARE: '2025:0.400,2026:0.505' } });
});
afterAll(() => svc.close());

const aggregate = async () => {
  const res = await svc.app.inject({ method: 'POST', url: '/admin/jobs/energy-aggregate/run', headers: admin });
  expect(res.statusCode).toBe(200);
};

const sessionsOf = async (token: string) =>
  new Map(
    ((await svc.app.inject({ method: 'GET', url: '/sessions?limit=100', headers: bearer(token) })).json().sessions as Array<{ id: string; counts_for_ere: boolean; ere_credits: number }>).map(
      (s) => [s.id, s],
    ),
  );

const countedWh = async (ids: string[], accountId: string) =>
  new Map([...(await sessionCredits(svc.deps, ids.map((id) => ({ id, mid: true, accountId })), '15'))].map(([id, c]) => [id, c.counted_wh]));

const monthWh = async (connectionId: string) =>
  new Map(
    (await svc.deps.db.selectFrom('energy_months').select(['month', 'wh']).where('connection_id', '=', connectionId).execute()).map((r) => [r.month, BigInt(r.wh ?? 0)]),
  );

describe('a session counts where its month can carry it (D124)', () => {
  it('a registered month holds what its last computation saw: later readings count in no month and in no session', async () => {
    const user = await aUser(svc.deps);
    const a = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, eligible: true });
    const ch = a.midChargerId!;
    const s1 = await aSession(svc.deps, ch, [['2026-09-10T08:00:00Z', 0], ['2026-09-10T10:00:00Z', 5_000]]);
    await aggregate();
    const sept = await svc.deps.db.selectFrom('energy_months').select('id').where('connection_id', '=', a.connectionId).where('month', '=', '2026-09').executeTakeFirstOrThrow();
    for (const action of ['start', 'register']) {
      const r = await svc.app.inject({ method: 'POST', url: `/admin/energy-months/${sept.id}/review`, headers: admin, payload: { action } });
      expect(r.statusCode).toBe(200);
    }
    // arriving after September was registered: a reading inside s1's step, a whole September session, and one that
    // crosses into October (1,001 Wh over 40 minutes, the boundary at 22:00Z halfway: 501 Wh in September, 500 in October)
    await aLateReading(svc.deps, ch, s1, '2026-09-10T09:00:00Z', 2_500);
    const s2 = await aSession(svc.deps, ch, [['2026-09-25T10:00:00Z', 140_000], ['2026-09-25T11:00:00Z', 142_000]]);
    const s3 = await aSession(svc.deps, ch, [['2026-09-30T21:40:00Z', 150_000], ['2026-09-30T22:20:00Z', 151_001]]);
    await aggregate();

    expect(await monthWh(a.connectionId)).toEqual(new Map([['2026-09', 5_000n], ['2026-10', 500n]]));
    expect(await countedWh([s1, s2, s3], a.accountId)).toEqual(new Map([[s1, 5_000n], [s2, 0n], [s3, 500n]]));
    const list = await sessionsOf(user.token);
    expect(list.get(s1)).toMatchObject({ counts_for_ere: true, ere_credits: 1.66 });
    expect(list.get(s2)).toMatchObject({ counts_for_ere: false, ere_credits: 0 });
    // October's 500 Wh: 0.5 kWh × 0.332694 ERE/kWh (0.505 × the 2026 factor) = 0.17, as the month shows
    expect(list.get(s3)).toMatchObject({ counts_for_ere: true, ere_credits: 0.17 });
    const energy = (await svc.app.inject({ method: 'GET', url: '/energy', headers: bearer(user.token) })).json();
    expect(energy.months.filter((m: { month: string }) => m.month <= '2026-10')).toEqual([
      expect.objectContaining({ month: '2026-10', kwh: 0.5, ere_credits: 0.17 }),
      expect.objectContaining({ month: '2026-09', kwh: 5, ere_credits: 1.66 }),
    ]);
  });

  it('Wh before the first compliance year count in no session, as in no month', async () => {
    const user = await aUser(svc.deps);
    const b = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, eligible: true });
    await svc.deps.db.updateTable('connections').set({ mandate_valid_from: new Date('2025-12-31T12:00:00Z') }).where('id', '=', b.connectionId).execute();
    // 22:30Z → 23:30Z on 31 December: the Amsterdam new year at 23:00Z, 1,500.5 → 1,501 Wh in December 2025, 1,500 in January
    const s = await aSession(svc.deps, b.midChargerId!, [['2025-12-31T22:30:00Z', 300_000], ['2025-12-31T23:30:00Z', 303_001]]);
    await aggregate();
    expect(await monthWh(b.connectionId)).toEqual(new Map([['2026-01', 1_500n]]));
    expect(await countedWh([s], b.accountId)).toEqual(new Map([[s, 1_500n]]));
    expect((await sessionsOf(user.token)).get(s)).toMatchObject({ counts_for_ere: true, ere_credits: 0.5 });
  });

  it("a month the CPO delivered stands for the connection's chargers: their sessions of it count in no session", async () => {
    const user = await aUser(svc.deps);
    const c = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, eligible: true });
    await anEnergyMonth(svc.deps, { connectionId: c.connectionId, month: '2026-08', kwh: '7.00', source: 'cpo' });
    const s = await aSession(svc.deps, c.midChargerId!, [['2026-08-05T08:00:00Z', 0], ['2026-08-05T10:00:00Z', 4_000]]);
    await aggregate();
    expect((await svc.deps.db.selectFrom('energy_months').select(['kwh', 'source']).where('connection_id', '=', c.connectionId).execute())).toEqual([{ kwh: '7.00', source: 'cpo' }]);
    expect((await sessionsOf(user.token)).get(s)).toMatchObject({ counts_for_ere: false, ere_credits: 0 });
    // and a rejected month carries nothing either
    await sql`update energy_months set status = 'rejected' where connection_id = ${c.connectionId}`.execute(svc.deps.db);
    expect(await countedWh([s], c.accountId)).toEqual(new Map([[s, 0n]]));
  });
});
