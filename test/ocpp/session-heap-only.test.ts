// A running session's readings written by the group commit (batch-write.ts writePlan) change no column that an index
// of charging_sessions reads, so PostgreSQL can make the update heap-only (migrations/0062, D85): such a batch stamps
// metered_at and leaves updated_at as it was. A stop (and any write of an ended session) still stamps updated_at,
// and the aggregation still finds the running session's new readings after its watermark, through metered_at.
import type { RPCClient } from 'ocpp-rpc';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateMonthlyEnergy } from '../../src/domain/energy/aggregate.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { anAccountWithConnection } from '../helpers/energy-factories.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline } from '../helpers/ocpp-factories.ts';

describe("a running session's readings leave every indexed column of its row as it was", () => {
  let svc: TestService;
  const clients: RPCClient[] = [];
  const { at } = hourAgoTimeline();

  beforeAll(async () => {
    svc = await createTestService({ listen: true });
  });
  afterAll(async () => {
    for (const c of clients) await c.close({ force: true }).catch(() => {});
    await svc?.close();
  });

  const oneStatement = async () =>
    Number(/^ocpp_ingest_messages_total\{path="one_statement"\} (\d+)/m.exec((await svc.app.inject({ method: 'GET', url: '/metrics' })).body)?.[1] ?? 0);
  const rowOf = async (chargerId: string) =>
    (await sql<Record<string, unknown>>`select * from charging_sessions where charger_id = ${chargerId}`.execute(svc.deps.db)).rows[0]!;
  /** every column of charging_sessions that an index names, as a key or in its condition */
  const indexedColumns = async () => {
    const defs = (await sql<{ def: string }>`select pg_get_indexdef(indexrelid) as def from pg_index where indrelid = 'charging_sessions'::regclass`.execute(svc.deps.db)).rows
      .map((r) => r.def)
      .join('\n');
    const columns = (await sql<{ name: string }>`select attname as name from pg_attribute where attrelid = 'charging_sessions'::regclass and attnum > 0 and not attisdropped`.execute(svc.deps.db)).rows;
    return new Set(columns.map((c) => c.name).filter((n) => new RegExp(`\\b${n}\\b`).test(defs)));
  };
  const changed = (a: Record<string, unknown>, b: Record<string, unknown>) =>
    Object.keys(a).filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));

  it('a MeterValues in one statement stamps metered_at, not updated_at; the stop stamps updated_at', async () => {
    const indexed = await indexedColumns();
    // what the readers of the watermark need indexed, and what a reading batch writes: the test means something only if
    // the first are indexed and the second are columns of the table
    expect([...indexed].sort()).toEqual(expect.arrayContaining(['charger_id', 'id', 'review_status', 'started_at', 'status', 'transaction_id', 'updated_at']));
    const user = await aUser(svc.deps);
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    clients.push(cli);
    const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 10_000, timestamp: at(0) })) as { transactionId: number };
    await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(1), 10_200)] });
    const before = await rowOf(ch.chargerId);

    const written = await oneStatement();
    await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(2), 10_500)] });
    expect(await oneStatement()).toBe(written + 1); // the group commit's statement wrote it
    const after = await rowOf(ch.chargerId);
    const diff = changed(before, after);
    expect(diff).toEqual(expect.arrayContaining(['energy_wh', 'last_meter_wh', 'last_reading_at', 'metered_at']));
    expect(diff.filter((c) => indexed.has(c))).toEqual([]);
    expect(after.updated_at).toEqual(before.updated_at);
    expect(after).toMatchObject({ status: 'active', energy_wh: '500', held_wh: '0' });

    await cli.call('StopTransaction', { transactionId, meterStop: 10_700, timestamp: at(3), idTag: 'TAG' });
    const stopped = await rowOf(ch.chargerId);
    expect(stopped).toMatchObject({ status: 'completed', energy_wh: '700' });
    expect((stopped.updated_at as Date).getTime()).toBeGreaterThan((after.updated_at as Date).getTime());
  });

  it('the aggregation counts the readings a running session got after its watermark', async () => {
    const user = await aUser(svc.deps);
    const acc = await anAccountWithConnection(svc.deps, { eligible: true, ownerUserId: user.userId });
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    clients.push(cli);
    await svc.deps.db.updateTable('chargers').set({ account_id: acc.accountId, mid_certified: true }).where('id', '=', ch.chargerId).execute();
    const monthWh = async () =>
      (await svc.deps.db.selectFrom('energy_months').select('wh').where('connection_id', '=', acc.connectionId).execute()).map((r) => r.wh);

    const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 20_000, timestamp: at(0) })) as { transactionId: number };
    await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(1), 20_300)] });
    await aggregateMonthlyEnergy(svc.deps, { safetyMarginSeconds: 0 }); // the watermark: this run's start
    expect(await monthWh()).toEqual(['300']);
    const stamped = (await rowOf(ch.chargerId)).updated_at;

    const written = await oneStatement();
    await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(2), 20_500)] });
    expect(await oneStatement()).toBe(written + 1);
    expect((await rowOf(ch.chargerId)).updated_at).toEqual(stamped); // older than the watermark: found by metered_at
    const run = await aggregateMonthlyEnergy(svc.deps, { safetyMarginSeconds: 0 });
    expect(run.mode).toBe('incremental');
    expect(await monthWh()).toEqual(['500']);
  });
});
