// C4.11 "keep every usable part": an unreadable sampled value is kept aside while the rest is applied; signed data
// arriving alone (1.6 StopTransaction with only an OCMF value, as calibration-law meters send it) signs the stop
// reading and the session closes (C4.5).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RPCClient } from 'ocpp-rpc';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline, type OcppProtocol, type TestCharger, withConnectedCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let user: { userId: string; token: string };
const { at } = hourAgoTimeline();
const OCMF_END = 'OCMF|{"FV":"1.0","RD":[{"TM":"end","RV":2.5,"RU":"kWh"}]}|{"SD":"3045"}';

beforeAll(async () => {
  svc = await createTestService({ listen: true });
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

const withCharger = (protocol: OcppProtocol, fn: (cli: RPCClient, ch: TestCharger) => Promise<void>) => withConnectedCharger(svc, user, protocol, fn);

const readingsOf = (chargerId: string) =>
  svc.deps.db.selectFrom('meter_readings').select(['wh', 'context', 'signed_data', 'session_id']).where('charger_id', '=', chargerId).orderBy('measured_at').orderBy('id').execute();
const quarantined = (chargerId: string) =>
  svc.deps.db.selectFrom('ocpp_quarantine').select(['kind', 'action', 'raw', 'reason', 'message_id']).where('charger_id', '=', chargerId).orderBy('id').execute();

describe('signed data alone (C4.5, C4.11)', () => {
  it('a StopTransaction whose transactionData holds only signed data closes its session with meterStop and keeps the signature', async () => {
    const ch = await withCharger('ocpp1.6', async (cli) => {
      const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 1000, timestamp: at(0) })) as { transactionId: number };
      await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(10), 2000)] });
      const stop = {
        transactionId,
        idTag: 'TAG',
        meterStop: 3500,
        timestamp: at(20),
        reason: 'Local',
        transactionData: [{ timestamp: at(20), sampledValue: [{ value: OCMF_END, context: 'Transaction.End', format: 'SignedData', measurand: 'Energy.Active.Import.Register', unit: 'Wh' }] }],
      };
      expect(await cli.call('StopTransaction', stop)).toEqual({ idTagInfo: { status: 'Accepted' } });
      // the charger resends it (its ack was lost): the same rows
      expect(await cli.call('StopTransaction', stop)).toEqual({ idTagInfo: { status: 'Accepted' } });
    });
    const [s] = await svc.deps.db.selectFrom('charging_sessions').selectAll().where('charger_id', '=', ch.chargerId).execute();
    // C5.5: the record is not verifiable (its signature is a placeholder and it says 2.5 kWh): the last step is held
    expect(s).toMatchObject({ status: 'completed', meter_stop_wh: '3500', energy_wh: '1000', held_wh: '1500', review_reason: 'invalid_signature' });
    const rows = await readingsOf(ch.chargerId);
    expect(rows.map((r) => [r.wh, r.context, r.signed_data])).toEqual([
      ['1000', 'Transaction.Begin', null],
      ['2000', 'Sample.Periodic', null],
      ['3500', 'Transaction.End', OCMF_END],
    ]);
    expect(await quarantined(ch.chargerId)).toEqual([]);
  });

  it('keeps aside a signed value whose timestamp matches no plain reading, and applies the rest', async () => {
    const ch = await withCharger('ocpp1.6', async (cli) => {
      const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: at(0) })) as { transactionId: number };
      const stop = { transactionId, meterStop: 800, timestamp: at(20), transactionData: [{ timestamp: at(15), sampledValue: [{ value: 'OCMF|x|y', format: 'SignedData' }] }] };
      expect(await cli.call('StopTransaction', stop)).toEqual({});
    });
    const [s] = await svc.deps.db.selectFrom('charging_sessions').selectAll().where('charger_id', '=', ch.chargerId).execute();
    expect(s).toMatchObject({ status: 'completed', meter_stop_wh: '800', energy_wh: '800' });
    const q = await quarantined(ch.chargerId);
    expect(q.map((r) => [r.kind, r.action])).toEqual([['part', 'StopTransaction']]);
    expect(q[0]!.reason).toMatch(/signed value without a plain register reading/);
    expect(q[0]!.raw).toContain('OCMF|x|y');
  });
});

describe('unreadable sampled values (C4.11)', () => {
  it('stores the good sample of a MeterValues and keeps the bad ones aside with their reasons (1.6 and 2.0.1)', async () => {
    const ch16 = await withCharger('ocpp1.6', async (cli) => {
      const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: at(0) })) as { transactionId: number };
      const mv = {
        connectorId: 1,
        transactionId,
        meterValue: [
          energyValue('ocpp1.6', at(1), 100),
          { timestamp: at(2), sampledValue: [{ value: 'abc' }, { value: '5', measurand: 'Vendor.Secret' }, { value: '230', measurand: 'Voltage' }] },
        ],
      };
      expect(await cli.call('MeterValues', mv)).toEqual({});
      // resent with a new message id: the reading once, the parts once
      expect(await cli.call('MeterValues', mv)).toEqual({});
    });
    expect((await readingsOf(ch16.chargerId)).map((r) => r.wh)).toEqual(['0', '100']);
    const q16 = await quarantined(ch16.chargerId);
    expect(q16.map((r) => [r.kind, r.action])).toEqual([['part', 'MeterValues'], ['part', 'MeterValues']]);
    expect(q16.map((r) => r.reason)).toEqual([expect.stringMatching(/value/), expect.stringMatching(/measurand "Vendor.Secret"/)]);
    expect(q16[0]!.raw).toContain('"abc"');

    const ch201 = await withCharger('ocpp2.0.1', async (cli) => {
      const ev = {
        eventType: 'Started',
        timestamp: at(0),
        triggerReason: 'Authorized',
        seqNo: 0,
        transactionInfo: { transactionId: 'T-9' },
        evse: { id: 1 },
        meterValue: [
          { timestamp: at(0), sampledValue: [{ value: 700, unitOfMeasure: { unit: 'Wh' } }] },
          { timestamp: at(0), sampledValue: [{ value: 1, unitOfMeasure: { unit: 'Wh', multiplier: 99 } }] },
        ],
      };
      expect(await cli.call('TransactionEvent', ev)).toEqual({});
    });
    expect((await readingsOf(ch201.chargerId)).map((r) => r.wh)).toEqual(['700']);
    const q201 = await quarantined(ch201.chargerId);
    expect(q201.map((r) => [r.kind, r.action])).toEqual([['part', 'TransactionEvent']]);
    expect(q201[0]!.reason).toMatch(/multiplier/);
    const [s] = await svc.deps.db.selectFrom('charging_sessions').select(['transaction_id', 'status']).where('charger_id', '=', ch201.chargerId).execute();
    expect(s).toEqual({ transaction_id: 'T-9', status: 'active' });
  });
});
