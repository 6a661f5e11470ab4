// The one write of monthly deliveries (record-energy.ts), which POST /v1/sessions:batch and the OCPP aggregation
// both use: several deliveries in one call are judged in order on the row as the ones before left it, the exact Wh
// and session count of an unchanged kWh are kept, registered and CPO months are left to their owners, and an
// archived or unknown connection is refused, each delivery with its own answer.
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { recordMonthlyEnergies } from '../../src/domain/energy/record-energy.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { anAccountWithConnection } from '../helpers/energy-factories.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await createTestService({ clock: testClock('2026-11-20T10:00:00Z') });
});
afterAll(() => svc?.close());

const rowOf = (connectionId: string, month: string) =>
  svc.deps.db
    .selectFrom('energy_months')
    .select([sql<string>`kwh::text`.as('kwh'), sql<string | null>`wh::text`.as('wh'), 'sessions', 'source', 'status'])
    .where('connection_id', '=', connectionId)
    .where('month', '=', month)
    .executeTakeFirst();

it('judges several deliveries of one month in one call in order, and keeps the exact Wh and sessions of an unchanged kWh', async () => {
  const a = await anAccountWithConnection(svc.deps, { eligible: true });
  const ocpp = (month: string, wh: bigint, sessions: number) => ({ connectionId: a.connectionId, month, wh, sessions, source: 'ocpp' as const });
  const first = await recordMonthlyEnergies(svc.deps, [ocpp('2026-05', 1_000n, 1), ocpp('2026-05', 2_000n, 2), ocpp('2026-05', 2_004n, 3), ocpp('2026-06', 500n, 1)]);
  expect(first.map((r) => [r.status, r.kwh])).toEqual([
    ['created', '1.00'],
    ['updated', '2.00'],
    ['unchanged', '2.00'], // the same 2.00 kWh: its exact Wh and session count are kept
    ['created', '0.50'],
  ]);
  expect(await rowOf(a.connectionId, '2026-05')).toEqual({ kwh: '2.00', wh: '2004', sessions: 3, source: 'ocpp', status: 'delivered' });

  const again = await recordMonthlyEnergies(svc.deps, [ocpp('2026-05', 2_001n, 3), ocpp('2026-06', 500n, 1)]);
  expect(again.map((r) => r.status)).toEqual(['unchanged', 'unchanged']);
  expect(await rowOf(a.connectionId, '2026-05')).toMatchObject({ kwh: '2.00', wh: '2001', sessions: 3 });
});

it('leaves registered and CPO months to their owners, and refuses an archived or unknown connection, each delivery alone', async () => {
  const a = await anAccountWithConnection(svc.deps, { eligible: true });
  const gone = await anAccountWithConnection(svc.deps, { eligible: true, connectionStatus: 'archived' });
  await recordMonthlyEnergies(svc.deps, [
    { connectionId: a.connectionId, month: '2026-03', kwh: 3, source: 'cpo' },
    { connectionId: a.connectionId, month: '2026-04', wh: 4_000n, sessions: 2, source: 'ocpp' },
  ]);
  await svc.deps.db.updateTable('energy_months').set({ status: 'registered' }).where('connection_id', '=', a.connectionId).where('month', '=', '2026-04').execute();
  const r = await recordMonthlyEnergies(svc.deps, [
    { connectionId: a.connectionId, month: '2026-03', wh: 9_000n, sessions: 5, source: 'ocpp' },
    { connectionId: a.connectionId, month: '2026-04', wh: 9_000n, sessions: 5, source: 'ocpp' },
    { connectionId: a.connectionId, month: '2026-04', kwh: 5, source: 'cpo' },
    { connectionId: gone.connectionId, month: '2026-04', kwh: 5, source: 'cpo' },
    { connectionId: '00000000-0000-4000-8000-000000000000', month: '2026-04', kwh: 5, source: 'cpo' },
    { connectionId: a.connectionId, month: '2027-01', kwh: 5, source: 'cpo' },
  ]);
  expect(r.map((x) => [x.status, x.leftAlone ?? x.error ?? null])).toEqual([
    ['unchanged', 'cpo'],
    ['unchanged', 'registered'],
    ['rejected', 'ere_booked'],
    ['rejected', 'connection_not_active'],
    ['rejected', 'connection_not_found'],
    ['rejected', 'month_in_future'],
  ]);
  expect(await rowOf(a.connectionId, '2026-03')).toMatchObject({ kwh: '3.00', wh: null, source: 'cpo' });
  expect(await rowOf(a.connectionId, '2026-04')).toMatchObject({ kwh: '4.00', wh: '4000', sessions: 2, status: 'registered' });
});
