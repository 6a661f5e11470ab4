// C5.5 capacity hold: a connection's monthly energy above CONNECTION_MAX_KW (17.3 kW) × the hours of the Amsterdam
// month is held with reason connection_capacity: the excess counts nowhere, the month cannot be registered until an
// operator accepts the excess (it then counts) or rejects it (it never counts). Figures computed by hand.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { monthHours, capacityWh } from '../../src/domain/ere/capacity.ts';
import { recomputeAllMonthlyEnergy } from '../../src/domain/energy/aggregate.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, aUser, bearer } from '../helpers/factories.ts';
import { anAccountWithConnection, aSession } from '../helpers/energy-factories.ts';

let svc: TestService;
const admin = bearer(TEST_ADMIN_TOKEN);

beforeAll(async () => {
  svc = await createTestService({ clock: testClock('2026-11-22T10:00:00Z'), env: { RENEWABLE_SHARE: '2026:0.505' } });
});
afterAll(() => svc.close());

const review = (id: string, action: string) => svc.app.inject({ method: 'POST', url: `/admin/energy-months/${id}/review`, headers: admin, payload: { action } });

describe('capacity hold (connection_capacity)', () => {
  it('counts the hours of the Amsterdam month, daylight saving time included', () => {
    expect([monthHours('2026-03'), monthHours('2026-10'), monthHours('2026-11'), monthHours('2026-02')]).toEqual([743n, 745n, 720n, 672n]);
    expect(svc.deps.config.CONNECTION_MAX_KW).toBe('17.3');
    expect(capacityWh(svc.deps.config, '2026-10')).toBe(12_888_500n); // 17,300 W × 745 h
  });

  it('holds the OCPP excess of a month above 17.3 kW × 745 h until the operator accepts it', async () => {
    const user = await aUser(svc.deps);
    const a = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, eligible: true });
    // 18 kW (below the charger's 22 kW: no step is implausible) through all of October, Amsterdam time:
    // 2026-10-01 00:00 (UTC+2) → 2026-11-01 00:00 (UTC+1) = 745 h → 13,410,000 Wh
    await aSession(svc.deps, a.midChargerId!, [['2026-09-30T22:00:00Z', 0], ['2026-10-15T12:00:00Z', 6_354_000], ['2026-10-31T23:00:00Z', 13_410_000]]);
    // the run says it held the month (D204: it said 0, counting only months written before holds existed)
    expect(await recomputeAllMonthlyEnergy(svc.deps)).toMatchObject({ created: 1, held_over_capacity: 1 });

    const held = await svc.app.inject({ method: 'GET', url: `/admin/energy-months?hold_status=held&connection_id=${a.connectionId}`, headers: admin });
    expect(held.statusCode).toBe(200);
    const [oct] = held.json().energy_months;
    // capacity 12,888,500 Wh; excess 13,410,000 − 12,888,500 = 521,500 Wh held; what counts 12,888.50 kWh
    expect(oct).toMatchObject({ month: '2026-10', kwh: 12888.5, held_kwh: 521.5, hold: { reason: 'connection_capacity', status: 'held' }, status: 'delivered' });
    const row = await svc.deps.db.selectFrom('energy_months').select(['wh']).where('id', '=', oct.id).executeTakeFirstOrThrow();
    expect(row.wh).toBe('13410000');

    // the views count what the connection could deliver, never the held excess: 12,888.50 × 0.332694 = 4,287.9…
    const energy = (await svc.app.inject({ method: 'GET', url: '/energy', headers: bearer(user.token) })).json();
    expect(energy.months[0]).toMatchObject({ month: '2026-10', kwh: 12888.5, ere_credits: 4287.93 });

    // not registered while the hold is open
    expect((await review(oct.id, 'start')).json().status).toBe('in_review');
    const refused = await review(oct.id, 'register');
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error).toBe('energy_held');
    // a re-run of the aggregation keeps the hold (same delivery)
    expect(await recomputeAllMonthlyEnergy(svc.deps)).toMatchObject({ unchanged: 1, held_over_capacity: 0 });

    const accepted = await review(oct.id, 'accept_held');
    expect(accepted.json()).toMatchObject({ kwh: 13410, held_kwh: 521.5, hold: { status: 'accepted' }, status: 'in_review' });
    expect((await review(oct.id, 'accept_held')).json().error).toBe('invalid_transition');
    // 13,410 × 0.332694 = 4,461.426… → 4,461.43 ERE booked
    expect((await review(oct.id, 'register')).json()).toMatchObject({ status: 'registered', ere: 4461.43 });
    expect((await recomputeAllMonthlyEnergy(svc.deps)).registered_left_alone).toBe(1);
  });

  it('holds a CPO delivery above capacity too; a rejected excess never counts and the same delivery again is unchanged', async () => {
    const cpo = await aPartner(svc.deps);
    const a = await anAccountWithConnection(svc.deps, { partnerId: cpo.partnerId, cpoExternalRef: 'CAP-1', eligible: true });
    const post = async (kwh: number) =>
      svc.app.inject({ method: 'POST', url: '/v1/sessions:batch', headers: bearer(await cpo.cpoToken()), payload: { items: [{ connection_id: a.connectionId, month: '2026-03', kwh }] } });
    expect((await post(13_000)).json().counts.created).toBe(1);
    // March has 743 h (the clock moves forward): 17.3 × 743 = 12,853.90 kWh; 146.10 kWh held
    const [mar] = (await svc.app.inject({ method: 'GET', url: `/admin/energy-months?connection_id=${a.connectionId}`, headers: admin })).json().energy_months;
    expect(mar).toMatchObject({ month: '2026-03', kwh: 12853.9, held_kwh: 146.1, hold: { reason: 'connection_capacity', status: 'held' } });
    const pos = (await svc.app.inject({ method: 'GET', url: '/v1/ere-positions?year=2026&cpo_external_ref=CAP-1', headers: bearer(await cpo.cpoToken()) })).json();
    // the CPO sees the hold too (D114): the 146.10 kWh it delivered above capacity, and all 13,000 as delivered
    expect(pos.positions[0]).toMatchObject({
      pending_kwh: 12853.9,
      delivered_kwh: 13000,
      months: [{ month: '2026-03', kwh: 12853.9, status: 'delivered', ere: 4276.42, held_kwh: 146.1, hold: { reason: 'connection_capacity', status: 'held' } }],
    });

    expect((await review(mar.id, 'reject_held')).json()).toMatchObject({ kwh: 12853.9, hold: { status: 'rejected' } });
    expect((await post(13_000)).json().results[0]).toMatchObject({ status: 'unchanged', kwh: 13000 });
    await review(mar.id, 'start');
    // 12,853.90 × 0.332694 = 4,276.42 ERE: the rejected excess is not booked
    expect((await review(mar.id, 'register')).json()).toMatchObject({ status: 'registered', kwh: 12853.9, ere: 4276.42 });
    expect((await post(12_000)).json().counts.rejected).toBe(1); // registered: another kWh is ere_booked
    // a month at capacity exactly carries no hold
    const resp = await svc.app.inject({
      method: 'POST', url: '/v1/sessions:batch', headers: bearer(await cpo.cpoToken()), payload: { items: [{ connection_id: a.connectionId, month: '2026-04', kwh: 12_456 }] },
    });
    expect(resp.json().counts.created).toBe(1);
    const apr = (await svc.app.inject({ method: 'GET', url: `/admin/energy-months?connection_id=${a.connectionId}&month=2026-04`, headers: admin })).json().energy_months[0];
    expect(apr).toMatchObject({ kwh: 12456, held_kwh: 0, hold: null }); // April: 17.3 × 720 = 12,456 kWh exactly
  });
});
