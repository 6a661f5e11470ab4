// Issue 10 item 7 / C4.5: the replay key of a meter reading includes the connector. Two connectors of one
// charger reporting equal readings (same second, measurand, phase and value) are two readings; a replay on one
// connector is still stored once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RPCClient } from 'ocpp-rpc';
import { loadBundledCatalog } from '../../src/domain/catalog/load.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline, type OcppProtocol, withConnectedCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let user: { userId: string; token: string };
const { at } = hourAgoTimeline();

beforeAll(async () => {
  svc = await createTestService({ listen: true });
  await loadBundledCatalog(svc.deps.db);
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

const withCharger = async (protocol: OcppProtocol, fn: (cli: RPCClient) => Promise<void>): Promise<string> =>
  (await withConnectedCharger(svc, user, protocol, fn)).chargerId;

const readingsOf = (chargerId: string) =>
  svc.deps.db
    .selectFrom('meter_readings')
    .select(['connector_id', 'measured_at', 'wh', 'session_id'])
    .where('charger_id', '=', chargerId)
    .orderBy('connector_id')
    .orderBy('measured_at')
    .execute();
const sessionsOf = (chargerId: string) =>
  svc.deps.db.selectFrom('charging_sessions').select(['id', 'connector_id', 'energy_wh']).where('charger_id', '=', chargerId).orderBy('connector_id').execute();

describe('meter-reading replay key with the connector (C4.5)', () => {
  it('1.6: two connectors starting the same second with equal registers keep two readings each; a replay is stored once', async () => {
    const chargerId = await withCharger('ocpp1.6', async (cli) => {
      const tx: number[] = [];
      for (const connectorId of [1, 2]) {
        const r = (await cli.call('StartTransaction', { connectorId, idTag: 'TAG', meterStart: 5000, timestamp: at(0) })) as { transactionId: number };
        tx.push(r.transactionId);
      }
      for (const [i, connectorId] of [1, 2].entries()) {
        await cli.call('MeterValues', { connectorId, transactionId: tx[i], meterValue: [energyValue('ocpp1.6', at(1), 5250)] });
      }
      // connector 1 resends its MeterValues (a new message id, the same content): a replay
      await cli.call('MeterValues', { connectorId: 1, transactionId: tx[0], meterValue: [energyValue('ocpp1.6', at(1), 5250)] });
    });
    const rows = await readingsOf(chargerId);
    expect(rows.map((r) => [r.connector_id, r.measured_at.toISOString(), r.wh])).toEqual([
      [1, new Date(at(0)).toISOString(), '5000'],
      [1, new Date(at(1)).toISOString(), '5250'],
      [2, new Date(at(0)).toISOString(), '5000'],
      [2, new Date(at(1)).toISOString(), '5250'],
    ]);
    const sessions = await sessionsOf(chargerId);
    expect(sessions.map((s) => [s.connector_id, s.energy_wh])).toEqual([
      [1, '250'],
      [2, '250'],
    ]);
    // each connector's readings belong to its own session
    for (const s of sessions) {
      expect(rows.filter((r) => r.connector_id === s.connector_id).every((r) => r.session_id === s.id)).toBe(true);
    }
  });

  it('2.0.1: equal readings of two EVSEs at the same second are two rows; the replayed event is stored once', async () => {
    const chargerId = await withCharger('ocpp2.0.1', async (cli) => {
      for (const evse of [1, 2]) {
        await cli.call('TransactionEvent', {
          eventType: 'Started',
          timestamp: at(0),
          triggerReason: 'CablePluggedIn',
          seqNo: 0,
          transactionInfo: { transactionId: `T-${evse}` },
          evse: { id: evse, connectorId: 1 },
          meterValue: [energyValue('ocpp2.0.1', at(0), 8000)],
        });
      }
      const updated = (evse: number) => ({
        eventType: 'Updated',
        timestamp: at(2),
        triggerReason: 'MeterValuePeriodic',
        seqNo: 1,
        transactionInfo: { transactionId: `T-${evse}` },
        evse: { id: evse, connectorId: 1 },
        meterValue: [energyValue('ocpp2.0.1', at(2), 8400)],
      });
      await cli.call('TransactionEvent', updated(1));
      await cli.call('TransactionEvent', updated(2));
      await cli.call('TransactionEvent', updated(2));
    });
    const rows = await readingsOf(chargerId);
    expect(rows.map((r) => [r.connector_id, r.wh])).toEqual([
      [1, '8000'],
      [1, '8400'],
      [2, '8000'],
      [2, '8400'],
    ]);
    expect((await sessionsOf(chargerId)).map((s) => s.energy_wh)).toEqual(['400', '400']);
  });
});

describe('readings of a named session', () => {
  it('1.6: MeterValues naming a transaction are stored under the session\'s connector, whatever connectorId the message carried', async () => {
    const chargerId = await withCharger('ocpp1.6', async (cli) => {
      const r = (await cli.call('StartTransaction', { connectorId: 2, idTag: 'TAG', meterStart: 1000, timestamp: at(0) })) as { transactionId: number };
      await cli.call('MeterValues', { connectorId: 1, transactionId: r.transactionId, meterValue: [energyValue('ocpp1.6', at(1), 1200)] });
    });
    const rows = await readingsOf(chargerId);
    expect(rows.map((r) => [r.connector_id, r.wh])).toEqual([
      [2, '1000'],
      [2, '1200'],
    ]);
    expect(new Set(rows.map((r) => r.session_id)).size).toBe(1);
  });
});
