// An outside audit of OCPP 2.0.1 ingest (D180, D182): what a charger's values are read as, from the outside.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RPCClient } from 'ocpp-rpc';
import { loadBundledCatalog } from '../../src/domain/catalog/load.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { energyValue, isoSeconds, type OcppProtocol, type TestCharger, withConnectedCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let user: { userId: string; token: string };
const T0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
const at = (min: number) => isoSeconds(T0 + min * 60_000);
const iso = (min: number) => new Date(T0 + min * 60_000).toISOString();

beforeAll(async () => {
  svc = await createTestService({ listen: true });
  await loadBundledCatalog(svc.deps.db);
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

const withCharger = (protocol: OcppProtocol, fn: (cli: RPCClient, ch: TestCharger) => Promise<void>) => withConnectedCharger(svc, user, protocol, fn);
const sessionsOf = (chargerId: string) => svc.deps.db.selectFrom('charging_sessions').selectAll().where('charger_id', '=', chargerId).orderBy('started_at').execute();
const readingsOf = (chargerId: string) =>
  svc.deps.db.selectFrom('meter_readings').select(['measured_at', 'wh', 'phase', 'anomaly', 'connector_id']).where('charger_id', '=', chargerId).orderBy('measured_at').execute();
const quarantineOf = (chargerId: string) =>
  svc.deps.db.selectFrom('ocpp_quarantine').select(['action', 'reason']).where('charger_id', '=', chargerId).orderBy('received_at').orderBy('id').execute();

let seq = 0;
const txEvent = (id: string, eventType: 'Started' | 'Updated' | 'Ended', timestamp: string, wh: number, extra: Record<string, unknown> = {}) => ({
  eventType,
  timestamp,
  triggerReason: 'MeterValuePeriodic',
  seqNo: seq++,
  transactionInfo: { transactionId: id },
  evse: { id: 1, connectorId: 1 },
  meterValue: [energyValue('ocpp2.0.1', timestamp, wh)],
  ...extra,
});
describe('D180: a total from phases only when all three are there', () => {
  const phases = (protocol: OcppProtocol, min: number, values: Array<[string, number]>) => ({
    timestamp: at(min),
    sampledValue: values.map(([phase, wh]) =>
      protocol === 'ocpp1.6' ? { value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh', phase } : { value: wh, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' }, phase },
    ),
  });

  for (const protocol of ['ocpp1.6', 'ocpp2.0.1'] as const) {
    it(`${protocol}: two phases of three make no register reading; N and L1-L2 never count; one form per sum`, async () => {
      const ch = await withCharger(protocol, async (cli) => {
        const send = (min: number, values: Array<[string, number]>) =>
          protocol === 'ocpp1.6'
            ? cli.call('MeterValues', { connectorId: 1, meterValue: [phases(protocol, min, values)] })
            : cli.call('MeterValues', { evseId: 1, meterValue: [phases(protocol, min, values)] });
        await send(0, [['L1', 1000], ['L2', 1000], ['L3', 1000]]); // 3000
        await send(5, [['L1', 2500], ['L2', 2500]]); // L3 missing: nothing
        await send(10, [['L1-N', 2000], ['L2', 2000], ['L3-N', 2000], ['N', 500], ['L1-L2', 9000]]); // mixed forms: nothing
        await send(15, [['L1-N', 2100], ['L2-N', 2100], ['L3-N', 2100], ['N', 500], ['L1-L2', 9000]]); // 6300
        await send(20, [['L1', 6400]]); // D206: L1 alone is a single-phase meter's register
        await send(25, [['L2', 6500]]); // another phase alone is not
      });
      expect((await readingsOf(ch.chargerId)).map((r) => [r.measured_at.toISOString(), r.wh, r.phase, r.anomaly])).toEqual([
        [iso(0), '3000', '', null],
        [iso(15), '6300', '', null],
        [iso(20), '6400', '', null],
      ]);
      expect(await svc.deps.metrics.getSingleMetricAsString('ocpp_quirks_total')).toContain('kind="phases_incomplete"');
    });
  }

  it('2.0.1: a dip from a missing phase is neither a backwards register nor counted twice in a session', async () => {
    const ch = await withCharger('ocpp2.0.1', async (cli) => {
      const mv = (min: number, values: Array<[string, number]>) => ({ timestamp: at(min), sampledValue: values.map(([phase, wh]) => ({ value: wh, unitOfMeasure: { unit: 'Wh' }, phase })) });
      await cli.call('TransactionEvent', { ...txEvent('P1', 'Started', at(0), 0), meterValue: [mv(0, [['L1', 2000], ['L2', 2000], ['L3', 2000]])] });
      await cli.call('TransactionEvent', { ...txEvent('P1', 'Updated', at(10), 0), meterValue: [mv(10, [['L1', 2500], ['L2', 2500]])] });
      await cli.call('TransactionEvent', { ...txEvent('P1', 'Ended', at(20), 0), meterValue: [mv(20, [['L1', 3000], ['L2', 3000], ['L3', 3000]])] });
    });
    const [s] = await sessionsOf(ch.chargerId);
    // before: 5,000 at T10 went "backwards" from 6,000 and its recovery to 9,000 counted 4,000 of the 3,000 moved
    expect([s!.energy_wh, s!.review_status]).toEqual(['3000', null]);
    expect((await readingsOf(ch.chargerId)).map((r) => [r.wh, r.anomaly])).toEqual([['6000', null], ['9000', null]]);
  });
});

describe('D182: absurd values are unusable, not stored', () => {
  it('2.0.1: a timestamp before 2000 or more than a day ahead is quarantined; so is an EVSE id outside 0..99', async () => {
    const ahead = isoSeconds(Date.now() + 25 * 3_600_000);
    const ch = await withCharger('ocpp2.0.1', async (cli) => {
      // acknowledged (transaction messages always are), kept in the quarantine, nothing stored
      expect(await cli.call('TransactionEvent', txEvent('Y0', 'Started', '0000-01-01T00:00:00Z', 1_000))).toEqual({});
      expect(await cli.call('TransactionEvent', txEvent('Y1', 'Started', '1970-01-01T00:00:00Z', 1_000))).toEqual({});
      expect(await cli.call('TransactionEvent', txEvent('Y2', 'Started', ahead, 1_000))).toEqual({});
      for (const evseId of [-1, 99 + 1]) expect(await cli.call('MeterValues', { evseId, meterValue: [energyValue('ocpp2.0.1', at(1), 5_000)] })).toEqual({});
      expect(await cli.call('TransactionEvent', txEvent('E1', 'Started', at(0), 1_000, { evse: { id: -1 } }))).toEqual({});
      // a meter value with such a time is set aside; the rest of its message is applied
      await cli.call('TransactionEvent', { ...txEvent('OK', 'Started', at(0), 2_000), meterValue: [energyValue('ocpp2.0.1', at(0), 2_000), energyValue('ocpp2.0.1', '1999-12-31T23:59:59Z', 1_000)] });
      // 99 is still an EVSE (D138's range)
      await cli.call('MeterValues', { evseId: 99, meterValue: [energyValue('ocpp2.0.1', at(2), 7_000)] });
    });
    expect((await sessionsOf(ch.chargerId)).map((s) => [s.transaction_id, s.started_at.toISOString()])).toEqual([['OK', iso(0)]]);
    expect((await readingsOf(ch.chargerId)).map((r) => [r.measured_at.toISOString(), r.wh, r.connector_id])).toEqual([
      [iso(0), '2000', 1],
      [iso(2), '7000', 99],
    ]);
    const q = (await quarantineOf(ch.chargerId)).map((x) => x.reason);
    expect(q).toHaveLength(7);
    expect(q.filter((r) => r.includes('before 2015-01-01'))).toHaveLength(3); // D256: the floor moved from 2000
    expect(q.filter((r) => r.includes('more than a day ahead'))).toHaveLength(1);
    expect(q.filter((r) => r.includes('is not a connector (0 to 99)'))).toHaveLength(3);
  });

  it('a negative register value is set aside (both versions, meterStart too); the rest of the message is applied', async () => {
    const ch16 = await withCharger('ocpp1.6', async (cli) => {
      const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'T', meterStart: 1_000, timestamp: at(0) })) as { transactionId: number };
      await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(1), -5), energyValue('ocpp1.6', at(2), 1_100)] });
      // a negative meterStart: the start is unusable (quarantined, answered with a fresh id and, D255, its tag's verdict)
      const bad = (await cli.call('StartTransaction', { connectorId: 2, idTag: 'T', meterStart: -5, timestamp: at(3) })) as { idTagInfo: { status: string } };
      expect(bad.idTagInfo.status).toBe('Accepted');
      expect(await cli.call('MeterValues', { connectorId: 100, meterValue: [energyValue('ocpp1.6', at(4), 1_200)] })).toEqual({});
    });
    expect((await readingsOf(ch16.chargerId)).map((r) => [r.wh, r.anomaly])).toEqual([['1000', null], ['1100', null]]);
    const q16 = (await quarantineOf(ch16.chargerId)).map((x) => x.reason);
    expect(q16).toHaveLength(3);
    expect(q16.filter((r) => r.includes('negative register value'))).toHaveLength(2);
    expect(q16.filter((r) => r.includes('is not a connector (0 to 99)'))).toHaveLength(1);

    const ch201 = await withCharger('ocpp2.0.1', async (cli) => {
      await cli.call('TransactionEvent', txEvent('N1', 'Started', at(0), 1_000));
      await cli.call('TransactionEvent', { ...txEvent('N1', 'Updated', at(1), 0), meterValue: [energyValue('ocpp2.0.1', at(1), -5), energyValue('ocpp2.0.1', at(2), 1_100)] });
    });
    const [s] = await sessionsOf(ch201.chargerId);
    expect([s!.energy_wh, s!.review_status]).toEqual(['100', null]);
    expect((await readingsOf(ch201.chargerId)).map((r) => r.wh)).toEqual(['1000', '1100']);
    expect((await quarantineOf(ch201.chargerId)).map((x) => x.reason)).toEqual([expect.stringContaining('negative register value')]);
  });
});
