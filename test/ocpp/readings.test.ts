// C4.5/C4.6 quirks: each yields the documented rows, with no reading lost (docs/ocpp.md "Readings and sessions").
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RPCClient } from 'ocpp-rpc';
import { loadBundledCatalog } from '../../src/domain/catalog/load.ts';
import { monthlyChargerEnergy } from '../../src/domain/energy/month-energy.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline, isoSeconds, type TestCharger, type OcppProtocol, withConnectedCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let user: { userId: string; token: string };
const { T0, at } = hourAgoTimeline();
const iso = isoSeconds;

beforeAll(async () => {
  svc = await createTestService({ listen: true });
  await loadBundledCatalog(svc.deps.db);
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

const withCharger = (protocol: OcppProtocol, fn: (cli: RPCClient, ch: TestCharger) => Promise<void>) => withConnectedCharger(svc, user, protocol, fn);

const readingsOf = (chargerId: string) =>
  svc.deps.db
    .selectFrom('meter_readings')
    .select(['measured_at', 'wh', 'phase', 'anomaly', 'session_id', 'signed_data', 'context', 'connector_id'])
    .where('charger_id', '=', chargerId)
    .orderBy('measured_at')
    .orderBy('id')
    .execute();
const sessionsOf = (chargerId: string) =>
  svc.deps.db.selectFrom('charging_sessions').selectAll().where('charger_id', '=', chargerId).orderBy('started_at').execute();

async function start16(cli: RPCClient, minute: number, meterStart: number, connectorId = 1, idTag = 'TAG') {
  const r = (await cli.call('StartTransaction', { connectorId, idTag, meterStart, timestamp: at(minute) })) as { transactionId: number };
  return r.transactionId;
}

describe('meter readings (C4.5)', () => {
  it('converts kWh (any letter case), rounds fractional Wh, reads a zone-less timestamp as UTC and keeps signed data', async () => {
    const ch = await withCharger('ocpp1.6', async (cli) => {
      const tx = await start16(cli, 0, 10_000);
      await cli.call('MeterValues', {
        connectorId: 1,
        transactionId: tx,
        meterValue: [
          { timestamp: at(1), sampledValue: [{ value: '10.25', unit: 'kWh' }] },
          { timestamp: at(2).replace('Z', ''), sampledValue: [{ value: '10.5', unit: 'kwh' }, { value: 'OCMF|{"RD":[]}|{"SA":"x"}', format: 'SignedData' }] },
          { timestamp: at(3), sampledValue: [{ value: '10700.6', measurand: 'energy.active.import.register', unit: 'Wh' }] },
        ],
      });
    });
    const rows = await readingsOf(ch.chargerId);
    // C5.5: the placeholder signature is an unreadable OCMF record, judged invalid: it holds the session and is no
    // base for the next step (D176), which counts from 10,250
    expect(rows.map((r) => [r.wh, r.anomaly])).toEqual([
      ['10000', null],
      ['10250', null],
      ['10500', 'invalid_signature'],
      ['10701', null],
    ]);
    expect(rows[2]!.measured_at.toISOString()).toBe(new Date(T0 + 120_000).toISOString());
    expect(rows[2]!.signed_data).toBe('OCMF|{"RD":[]}|{"SA":"x"}');
    const [s] = await sessionsOf(ch.chargerId);
    expect(s).toMatchObject({ energy_wh: '701', held_wh: '0', review_status: 'held', review_reason: 'invalid_signature' });
    const quirks = await svc.deps.metrics.getSingleMetricAsString('ocpp_quirks_total');
    for (const k of ['enum_case', 'timestamp_without_zone', 'fractional_wh']) expect(quirks).toContain(`kind="${k}"`);
  });

  it('applies a 2.0.1 multiplier and sums per-phase-only registers; keeps signedMeterValue', async () => {
    const ch = await withCharger('ocpp2.0.1', async (cli) => {
      const base = { transactionInfo: { transactionId: 'T-mult' }, evse: { id: 1, connectorId: 1 } };
      await cli.call('TransactionEvent', {
        ...base, eventType: 'Started', timestamp: at(0), triggerReason: 'CablePluggedIn', seqNo: 0,
        meterValue: [{ timestamp: at(0), sampledValue: [{ value: 2, unitOfMeasure: { unit: 'kWh', multiplier: 1 }, context: 'Transaction.Begin', signedMeterValue: { signedMeterData: 'abc', signingMethod: 'ECDSA', encodingMethod: 'OCMF', publicKey: 'k' } }] }],
      });
      await cli.call('TransactionEvent', {
        ...base, eventType: 'Updated', timestamp: at(1), triggerReason: 'MeterValuePeriodic', seqNo: 1,
        meterValue: [{ timestamp: at(1), sampledValue: [
          { value: 6700, phase: 'L1', unitOfMeasure: { unit: 'Wh' } },
          { value: 6700, phase: 'L2', unitOfMeasure: { unit: 'Wh' } },
          { value: 66.1, phase: 'L3', unitOfMeasure: { unit: 'Wh', multiplier: 2 } },
          { value: 16, measurand: 'Current.Import', phase: 'L1', unitOfMeasure: { unit: 'A' } },
        ] }],
      });
    });
    const rows = await readingsOf(ch.chargerId);
    expect(rows.map((r) => [r.wh, r.phase])).toEqual([['20000', ''], ['20010', '']]);
    expect(JSON.parse(rows[0]!.signed_data!)).toMatchObject({ signedMeterData: 'abc', encodingMethod: 'OCMF' });
    expect(rows[0]!.context).toBe('Transaction.Begin');
    // the start's signature is unreadable: the step from that doubtful first value is held until accepted (D176)
    expect((await sessionsOf(ch.chargerId))[0]).toMatchObject({ energy_wh: '0', held_wh: '10', review_status: 'held', review_reason: 'invalid_signature' });
  });

  it("reads the register of the connector's meter: Outlet before Cable, Inlet and Body; never the vehicle's (EV)", async () => {
    const ch = await withCharger('ocpp1.6', async (cli) => {
      const tx = await start16(cli, 0, 10_000);
      const w = (value: string, location?: string, phase?: string) => ({ value, unit: 'Wh', ...(location ? { location } : {}), ...(phase ? { phase } : {}) });
      const power = (value: string, location?: string) => ({ value, measurand: 'Power.Active.Import', unit: 'W', ...(location ? { location } : {}) });
      await cli.call('MeterValues', {
        connectorId: 1,
        transactionId: tx,
        meterValue: [
          // the vehicle's own figure and the grid inlet's register (the whole charger) beside the connector's
          { timestamp: at(1), sampledValue: [w('99999', 'EV'), w('50000', 'Inlet'), w('10250', 'Outlet')] },
          // no location is the connector's (the default); the vehicle's power is not the charger's either
          { timestamp: at(2), sampledValue: [w('60000', 'inlet'), w('10400'), power('7000', 'EV'), power('3500')] },
          // only the vehicle's figure: no reading
          { timestamp: at(3), sampledValue: [w('120000', 'EV')] },
          // the connector's phases before the inlet's total
          { timestamp: at(4), sampledValue: [w('60500', 'Inlet'), w('3500', 'Outlet', 'L1'), w('3500', 'Outlet', 'L2'), w('3600', 'Outlet', 'L3')] },
          // the connector's value unreadable: set aside, and the inlet's does not stand in for it
          { timestamp: at(5), sampledValue: [w('abc', 'Outlet'), w('60600', 'Inlet')] },
          // only the inlet was sent: it is what this charger reports
          { timestamp: at(6), sampledValue: [w('10700', 'Inlet')] },
          // a label OCPP does not have is read as the default, even one that names a property of every JavaScript object
          { timestamp: at(7), sampledValue: [w('10800', 'constructor')] },
          { timestamp: at(8), sampledValue: [w('10900', '__proto__'), w('61000', 'Inlet')] },
        ],
      });
    });
    const rows = await svc.deps.db.selectFrom('meter_readings').select(['measured_at', 'wh', 'power_w']).where('charger_id', '=', ch.chargerId).orderBy('measured_at').execute();
    expect(rows.map((r) => [iso(new Date(r.measured_at).getTime()), r.wh, r.power_w])).toEqual([
      [at(0), '10000', null],
      [at(1), '10250', null],
      [at(2), '10400', 3500],
      [at(4), '10600', null],
      [at(6), '10700', null],
      [at(7), '10800', null],
      [at(8), '10900', null],
    ]);
    expect((await sessionsOf(ch.chargerId))[0]!.energy_wh).toBe('900');
    const q = await svc.deps.db.selectFrom('ocpp_quarantine').select(['kind', 'raw', 'reason']).where('charger_id', '=', ch.chargerId).execute();
    expect(q).toEqual([expect.objectContaining({ kind: 'part', raw: expect.stringContaining('"abc"') })]);
    expect(await svc.deps.metrics.getSingleMetricAsString('ocpp_quirks_total')).toContain('kind="location_ignored"');
  });

  it('flags a register going backwards, never yields negative energy; flags an implausible step and holds it out', async () => {
    const ch = await withCharger('ocpp1.6', async (cli) => {
      const tx = await start16(cli, 0, 5000);
      await cli.call('MeterValues', { connectorId: 1, transactionId: tx, meterValue: [energyValue('ocpp1.6', at(1), 5200), energyValue('ocpp1.6', at(2), 100), energyValue('ocpp1.6', at(3), 400)] });
      // 400 Wh → 400 kWh in one minute: a Wh/kWh mix-up (24 MW)
      await cli.call('MeterValues', { connectorId: 1, transactionId: tx, meterValue: [{ timestamp: at(4), sampledValue: [{ value: '400', unit: 'kWh' }] }] });
      // the end reading also comes in transactionData, as many chargers send it
      await cli.call('StopTransaction', { transactionId: tx, meterStop: 400_100, timestamp: at(5), transactionData: [{ timestamp: at(5), sampledValue: [{ value: '400100', context: 'Transaction.End', format: 'Raw' }, { value: 'OCMF|end', context: 'Transaction.End', format: 'SignedData' }] }] });
    });
    const rows = await readingsOf(ch.chargerId);
    expect(rows.map((r) => [r.wh, r.anomaly])).toEqual([
      ['5000', null],
      ['5200', null],
      ['100', 'register_backwards'],
      ['400', null],
      ['400000', 'implausible_power'],
      // C5.5: 'OCMF|end' is an unreadable record, judged invalid
      ['400100', 'invalid_signature'],
    ]);
    expect(rows[5]).toMatchObject({ context: 'Transaction.End', signed_data: 'OCMF|end' });
    const [s] = await sessionsOf(ch.chargerId);
    expect(s).toMatchObject({ energy_wh: '500', status: 'completed', meter_stop_wh: '400100', held_wh: '399700', review_reason: 'implausible_power,invalid_signature,register_backwards' });
    expect(await svc.deps.db.selectFrom('ocpp_quarantine').select('id').where('charger_id', '=', ch.chargerId).execute()).toEqual([]);
  });

  it('stores a replayed MeterValues (new message id) once, and places a late offline batch by its timestamps', async () => {
    const ch = await withCharger('ocpp1.6', async (cli) => {
      const tx = await start16(cli, 0, 0);
      const mv = { connectorId: 1, transactionId: tx, meterValue: [energyValue('ocpp1.6', at(1), 300)] };
      await cli.call('MeterValues', mv);
      await cli.call('MeterValues', mv);
      await cli.call('StopTransaction', { transactionId: tx, meterStop: 1500, timestamp: at(5) });
      // the offline queue arrives after the stop, newest first
      await cli.call('MeterValues', { connectorId: 1, transactionId: tx, meterValue: [energyValue('ocpp1.6', at(4), 1200), energyValue('ocpp1.6', at(2), 600)] });
      await cli.call('MeterValues', { connectorId: 1, transactionId: tx, meterValue: [energyValue('ocpp1.6', at(3), 900)] });
    });
    const rows = await readingsOf(ch.chargerId);
    expect(rows.map((r) => r.wh)).toEqual(['0', '300', '600', '900', '1200', '1500']);
    expect(rows.every((r) => r.anomaly === null && r.session_id !== null)).toBe(true);
    const [s] = await sessionsOf(ch.chargerId);
    expect(s).toMatchObject({ energy_wh: '1500', last_meter_wh: '1500' });
    expect(s!.last_reading_at!.toISOString()).toBe(new Date(T0 + 5 * 60_000).toISOString());
  });

  it('a replay that adds nothing writes nothing (the readings and the session keep their row versions); one that adds a power value is written', async () => {
    // each row's version (xmin): a write of any kind, even of the same values, makes a new one
    const versions = async (chargerId: string) => ({
      readings: (await sql<{ x: string; power_w: number | null }>`select xmin::text as x, power_w from meter_readings where charger_id = ${chargerId} order by measured_at`.execute(svc.deps.db)).rows,
      session: (await sql<{ x: string; energy_wh: string }>`select xmin::text as x, energy_wh from charging_sessions where charger_id = ${chargerId}`.execute(svc.deps.db)).rows,
    });
    await withCharger('ocpp1.6', async (cli, ch) => {
      const tx = await start16(cli, 0, 0);
      const mv = { connectorId: 1, transactionId: tx, meterValue: [energyValue('ocpp1.6', at(1), 300), energyValue('ocpp1.6', at(2), 600)] };
      await cli.call('MeterValues', mv);
      const before = await versions(ch.chargerId);
      expect(before.session).toEqual([{ x: expect.any(String), energy_wh: '600' }]);
      // the charger missed the answer and sends the message again, twice
      expect(await cli.call('MeterValues', mv)).toEqual({});
      expect(await cli.call('MeterValues', { ...mv, meterValue: [mv.meterValue[1]] })).toEqual({});
      expect(await versions(ch.chargerId)).toEqual(before);
      // the first reading again, now with the power the charger measured beside it: written, the session recomputed
      const withPower = {
        timestamp: at(1),
        sampledValue: [
          { value: '300', measurand: 'Energy.Active.Import.Register', unit: 'Wh' },
          { value: '3600', measurand: 'Power.Active.Import', unit: 'W' },
        ],
      };
      expect(await cli.call('MeterValues', { connectorId: 1, transactionId: tx, meterValue: [withPower] })).toEqual({});
      const after = await versions(ch.chargerId);
      expect(after.readings.map((r) => r.power_w)).toEqual([null, 3600, null]);
      expect(after.readings[1]!.x).not.toBe(before.readings[1]!.x);
      expect([after.readings[0]!.x, after.readings[2]!.x]).toEqual([before.readings[0]!.x, before.readings[2]!.x]);
      expect(after.session).toEqual([{ x: expect.any(String), energy_wh: '600' }]);
      expect(after.session[0]!.x).not.toBe(before.session[0]!.x);
    });
  });
});

describe('sessions (C4.6)', () => {
  it('gives a replayed StartTransaction the same id, and ids unique across chargers', async () => {
    let a = 0, b = 0, c = 0;
    await withCharger('ocpp1.6', async (cli) => {
      a = await start16(cli, 0, 100);
      b = await start16(cli, 0, 100);
    });
    await withCharger('ocpp1.6', async (cli) => {
      c = await start16(cli, 0, 100);
    });
    expect(b).toBe(a);
    expect(c).not.toBe(a);
  });

  it('matches a StopTransaction with an unknown or -1 id by time, and quarantines one that matches nothing', async () => {
    const ch = await withCharger('ocpp1.6', async (cli) => {
      await start16(cli, 0, 1000);
      expect(await cli.call('StopTransaction', { transactionId: -1, meterStop: 1800, timestamp: at(10), idTag: 'TAG' })).toEqual({ idTagInfo: { status: 'Accepted' } });
      // nothing open any more: acknowledged, kept in quarantine
      expect(await cli.call('StopTransaction', { transactionId: 987654, meterStop: 1900, timestamp: at(20) })).toEqual({});
      // unusable (no timestamp): acknowledged and quarantined too
      expect(await cli.call('MeterValues', { connectorId: 1, meterValue: [{ sampledValue: [{ value: '1' }] }] })).toEqual({});
    });
    const [s] = await sessionsOf(ch.chargerId);
    expect(s).toMatchObject({ status: 'completed', energy_wh: '800', meter_stop_wh: '1800', end_provisional: false });
    const q = await svc.deps.db.selectFrom('ocpp_quarantine').selectAll().where('charger_id', '=', ch.chargerId).orderBy('id').execute();
    expect(q.map((r) => [r.action, r.protocol])).toEqual([['StopTransaction', 'ocpp1.6'], ['MeterValues', 'ocpp1.6']]);
    expect(q[0]!.payload).toMatchObject({ transactionId: 987654, meterStop: 1900 });
    expect(q[0]!.reason).toContain('987654');
    const review = await svc.app.inject({ method: 'GET', url: `/admin/chargers/${ch.chargerId}/quarantine`, headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` } });
    expect(review.statusCode).toBe(200);
    expect(review.json().messages.map((m: { action: string }) => m.action)).toEqual(['MeterValues', 'StopTransaction']);
    expect(review.json().messages[1]).toMatchObject({ protocol: 'ocpp1.6', payload: { transactionId: 987654 }, message_id: expect.any(String) });
    const counted = await svc.deps.metrics.getSingleMetricAsString('ocpp_quarantined_messages_total');
    expect(counted).toContain('ocpp_quarantined_messages_total{action="StopTransaction"} 1');
  });

  it('attaches MeterValues without transactionId by connector and time; connector 0 stays station-level', async () => {
    const ch = await withCharger('ocpp1.6', async (cli) => {
      await start16(cli, 0, 0, 2);
      await cli.call('MeterValues', { connectorId: 2, meterValue: [energyValue('ocpp1.6', at(1), 250)] });
      await cli.call('MeterValues', { connectorId: 2, transactionId: 0, meterValue: [energyValue('ocpp1.6', at(2), 500)] });
      await cli.call('MeterValues', { connectorId: 0, meterValue: [energyValue('ocpp1.6', at(2), 99_000)] });
    });
    const rows = await readingsOf(ch.chargerId);
    const [s] = await sessionsOf(ch.chargerId);
    expect(rows.map((r) => [r.wh, r.session_id, r.connector_id])).toEqual([
      ['0', s!.id, 2],
      ['250', s!.id, 2],
      ['500', s!.id, 2],
      ['99000', null, 0],
    ]);
    expect(s!.energy_wh).toBe('500');
  });

  it('closes a session provisionally when the charger reboots mid-session; the later Stop replaces the end', async () => {
    const ch = await anOcppCharger(svc, user);
    const c1 = await connectCharger(svc, ch, 'ocpp1.6');
    const tx = await start16(c1, 0, 0);
    await c1.call('MeterValues', { connectorId: 1, transactionId: tx, meterValue: [energyValue('ocpp1.6', at(3), 900)] });
    await c1.close();
    const c2 = await connectCharger(svc, ch, 'ocpp1.6'); // boots again
    let [s] = await sessionsOf(ch.chargerId);
    expect(s).toMatchObject({ status: 'completed', end_provisional: true, meter_stop_wh: '900', energy_wh: '900' });
    expect(s!.ended_at!.toISOString()).toBe(new Date(T0 + 3 * 60_000).toISOString());
    await c2.call('StopTransaction', { transactionId: tx, meterStop: 1200, timestamp: at(4) });
    await c2.close();
    [s] = await sessionsOf(ch.chargerId);
    expect(s).toMatchObject({ status: 'completed', end_provisional: false, meter_stop_wh: '1200', energy_wh: '1200' });
    expect(s!.ended_at!.toISOString()).toBe(new Date(T0 + 4 * 60_000).toISOString());
  });

  it('reopens a provisionally closed session that goes on after a boot without a reboot', async () => {
    const ch = await anOcppCharger(svc, user);
    const c1 = await connectCharger(svc, ch, 'ocpp1.6');
    const tx = await start16(c1, 0, 0);
    await c1.close();
    const c2 = await connectCharger(svc, ch, 'ocpp1.6'); // boots on every reconnect
    expect((await sessionsOf(ch.chargerId))[0]).toMatchObject({ status: 'completed', end_provisional: true });
    const now = iso(Math.floor(Date.now() / 1000) * 1000 + 1000);
    await c2.call('MeterValues', { connectorId: 1, transactionId: tx, meterValue: [energyValue('ocpp1.6', now, 700)] });
    await c2.close();
    const [s] = await sessionsOf(ch.chargerId);
    expect(s).toMatchObject({ status: 'active', end_provisional: false, ended_at: null, energy_wh: '700' });
  });

  it('a reopened session takes the readings its connector sent while it stood closed (D208)', async () => {
    const ch = await anOcppCharger(svc, user);
    const c1 = await connectCharger(svc, ch, 'ocpp1.6');
    const tx = await start16(c1, 0, 0);
    await c1.close();
    const c2 = await connectCharger(svc, ch, 'ocpp1.6');
    const t = Math.floor(Date.now() / 1000) * 1000;
    // while the session stands closed, a reading naming no transaction: no session runs, so it is stored without one
    await c2.call('MeterValues', { connectorId: 1, meterValue: [energyValue('ocpp1.6', iso(t - 10 * 60_000), 300)] });
    await c2.call('MeterValues', { connectorId: 1, transactionId: tx, meterValue: [energyValue('ocpp1.6', iso(t + 2000), 700)] });
    await c2.close();
    const [s] = await sessionsOf(ch.chargerId);
    const rows = await svc.deps.db.selectFrom('meter_readings').select(['wh', 'session_id']).where('charger_id', '=', ch.chargerId).orderBy('measured_at').execute();
    expect(rows).toEqual([
      { wh: '0', session_id: s!.id },
      { wh: '300', session_id: s!.id },
      { wh: '700', session_id: s!.id },
    ]);
    expect(s).toMatchObject({ status: 'active', energy_wh: '700' });
  });

  it('2.0.1: seqNo restarting per transaction deduplicates nothing; an offline Ended for an unseen transaction opens and closes it', async () => {
    const ch = await withCharger('ocpp2.0.1', async (cli) => {
      for (const id of ['A', 'B']) {
        const base = { transactionInfo: { transactionId: id }, evse: { id: 1 } };
        const off = id === 'A' ? 0 : 10;
        await cli.call('TransactionEvent', { ...base, eventType: 'Started', timestamp: at(off), triggerReason: 'Authorized', seqNo: 0, meterValue: [energyValue('ocpp2.0.1', at(off), 1000 * off)] });
        await cli.call('TransactionEvent', { ...base, eventType: 'Ended', timestamp: at(off + 5), triggerReason: 'StopAuthorized', seqNo: 1, meterValue: [energyValue('ocpp2.0.1', at(off + 5), 1000 * off + 500)] });
      }
      await cli.call('TransactionEvent', {
        transactionInfo: { transactionId: 'C' }, eventType: 'Ended', offline: true, timestamp: at(30), triggerReason: 'StopAuthorized', seqNo: 7, evse: { id: 1 },
        meterValue: [energyValue('ocpp2.0.1', at(25), 20_000), energyValue('ocpp2.0.1', at(30), 20_700)],
      });
    });
    const s = await sessionsOf(ch.chargerId);
    expect(s.map((x) => [x.transaction_id, x.energy_wh, x.status])).toEqual([
      ['A', '500', 'completed'],
      ['B', '500', 'completed'],
      ['C', '700', 'completed'],
    ]);
    expect(s[2]!.started_at.toISOString()).toBe(new Date(T0 + 25 * 60_000).toISOString());
  });

  it('records a transaction with an invalid tag under the list policy and answers the real verdict', async () => {
    const ch = await anOcppCharger(svc, user);
    const put = await svc.app.inject({
      method: 'PUT',
      url: `/admin/chargers/${ch.chargerId}/id-tokens`,
      headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
      payload: { policy: 'list', tokens: [{ id_token: 'GOOD', status: 'Accepted' }, { id_token: 'OLD', status: 'Accepted', expires_at: '2020-01-01T00:00:00Z' }] },
    });
    expect(put.statusCode).toBe(200);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      expect(await cli.call('Authorize', { idTag: 'GOOD' })).toEqual({ idTagInfo: { status: 'Accepted' } });
      expect(await cli.call('Authorize', { idTag: 'OLD' })).toMatchObject({ idTagInfo: { status: 'Expired' } });
      const r = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'NOPE', meterStart: 0, timestamp: at(0) })) as { transactionId: number; idTagInfo: { status: string } };
      expect(r.idTagInfo.status).toBe('Invalid');
      expect(r.transactionId).toBeGreaterThan(0);
    } finally {
      await cli.close();
    }
    const c201 = await connectCharger(svc, ch, 'ocpp2.0.1');
    try {
      expect(await c201.call('Authorize', { idToken: { idToken: 'GOOD', type: 'ISO14443' } })).toEqual({ idTokenInfo: { status: 'Accepted' } });
      const r = await c201.call('TransactionEvent', {
        eventType: 'Started', timestamp: at(30), triggerReason: 'Authorized', seqNo: 0, transactionInfo: { transactionId: 'X-1' }, evse: { id: 1 },
        idToken: { idToken: 'STRANGER', type: 'ISO14443' },
      });
      expect(r).toEqual({ idTokenInfo: { status: 'Invalid' } });
    } finally {
      await c201.close();
    }
    expect((await sessionsOf(ch.chargerId)).map((x) => x.id_tag)).toEqual(['NOPE', 'STRANGER']);
  });

  it('id tokens are case-insensitive (1.6 CiString, 2.0.1 IdToken); an empty idTag gets the policy verdict, not Invalid', async () => {
    const ch = await anOcppCharger(svc, user);
    const put = (payload: object) =>
      svc.app.inject({ method: 'PUT', url: `/admin/chargers/${ch.chargerId}/id-tokens`, headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` }, payload });
    // tokens differing only in case are one token: listed twice with another status, the list is refused (D141) and
    // nothing changes; listed twice alike, the first spelling is kept
    const conflicting = await put({ policy: 'list', tokens: [{ id_token: '04A2B3C4', status: 'Accepted' }, { id_token: '04a2b3c4', status: 'Blocked' }] });
    expect(conflicting.statusCode).toBe(400);
    expect(conflicting.json()).toEqual({ error: 'invalid_request', detail: expect.stringContaining('tokens.1: 04a2b3c4 is listed at 0 too') });
    const listed = await put({ policy: 'list', tokens: [{ id_token: '04A2B3C4', status: 'Accepted' }, { id_token: '04a2b3c4', status: 'Accepted' }, { id_token: 'Lost', status: 'Blocked' }] });
    expect(listed.json().tokens.map((t: { id_token: string }) => t.id_token)).toEqual(['04A2B3C4', 'Lost']);
    // D144: the list reads back as it stands
    const read = await svc.app.inject({ method: 'GET', url: `/admin/chargers/${ch.chargerId}/id-tokens`, headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` } });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(listed.json());
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      expect(await cli.call('Authorize', { idTag: '04a2b3c4' })).toEqual({ idTagInfo: { status: 'Accepted' } });
      expect(await cli.call('Authorize', { idTag: 'LOST' })).toEqual({ idTagInfo: { status: 'Blocked' } });
      const listStart = (await cli.call('StartTransaction', { connectorId: 1, idTag: '04a2b3c4', meterStart: 0, timestamp: at(0) })) as { transactionId: number; idTagInfo: { status: string } };
      expect(listStart.idTagInfo.status).toBe('Accepted');
      // an empty tag is not on the list
      const emptyOnList = (await cli.call('StartTransaction', { connectorId: 2, idTag: '', meterStart: 0, timestamp: at(1) })) as { idTagInfo: { status: string } };
      expect(emptyOnList.idTagInfo.status).toBe('Invalid');
    } finally {
      await cli.close();
    }
    // under accept_all an empty tag is accepted as any other (a charger told Invalid stops charging)
    expect((await put({ policy: 'accept_all' })).statusCode).toBe(200);
    const again = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      const r = (await again.call('StartTransaction', { connectorId: 3, idTag: '', meterStart: 0, timestamp: at(2) })) as { idTagInfo: { status: string } };
      expect(r.idTagInfo.status).toBe('Accepted');
    } finally {
      await again.close();
    }
  });

  it('a session starting at the instant and register value of the stop before it counts from its start (1.6 and 2.0.1)', async () => {
    // A: 1,000 → 2,500 → 3,000 Wh; B starts in the same second A stopped, at 3,000 Wh: 3,000 → 4,500 → 5,500. The
    // start reading has the replay key of A's stop reading (one row, A's), so B counted only 4,500 → 5,500 before
    const check = async (chargerId: string) => {
      const s = await sessionsOf(chargerId);
      expect(s.map((x) => [x.energy_wh, x.review_status, x.first_reading_at?.toISOString(), x.last_meter_wh])).toEqual([
        ['2000', null, new Date(T0).toISOString(), '3000'],
        ['2500', null, new Date(T0 + 20 * 60_000).toISOString(), '5500'],
      ]);
      // the monthly aggregation's Wh (and with it GET /energy and the ERE counting) agree with the sessions
      const months = await monthlyChargerEnergy(svc.deps, [chargerId]);
      expect([...months.values()].reduce((n, m) => n + m.wh, 0n)).toBe(4500n);
      // counted from a moment inside B's first stretch (the split reads B's start point: 3,000 → 4,500 in 10 minutes)
      const fromMid = await monthlyChargerEnergy(svc.deps, [chargerId], new Date(T0 + 25 * 60_000));
      expect([...fromMid.values()].reduce((n, m) => n + m.wh, 0n)).toBe(750n + 1000n);
      expect((await readingsOf(chargerId)).filter((r) => r.phase === '').length).toBe(5); // the shared reading stored once
    };
    const ch16 = await withCharger('ocpp1.6', async (cli) => {
      const a = await start16(cli, 0, 1000);
      await cli.call('MeterValues', { connectorId: 1, transactionId: a, meterValue: [{ timestamp: at(10), sampledValue: [{ value: '2500' }] }] });
      await cli.call('StopTransaction', { transactionId: a, meterStop: 3000, timestamp: at(20) });
      const b = await start16(cli, 20, 3000);
      await cli.call('MeterValues', { connectorId: 1, transactionId: b, meterValue: [{ timestamp: at(30), sampledValue: [{ value: '4500' }] }] });
      await cli.call('StopTransaction', { transactionId: b, meterStop: 5500, timestamp: at(40) });
    });
    await check(ch16.chargerId);
    const ch201 = await withCharger('ocpp2.0.1', async (cli) => {
      let seq = 0;
      for (const [id, from, mid, to] of [['A', 0, 1000, 2500], ['B', 20, 3000, 4500]] as const) {
        const base = { transactionInfo: { transactionId: id }, evse: { id: 1, connectorId: 1 } };
        await cli.call('TransactionEvent', { ...base, eventType: 'Started', timestamp: at(from), triggerReason: 'Authorized', seqNo: seq++, meterValue: [energyValue('ocpp2.0.1', at(from), mid)] });
        await cli.call('TransactionEvent', { ...base, eventType: 'Updated', timestamp: at(from + 10), triggerReason: 'MeterValuePeriodic', seqNo: seq++, meterValue: [energyValue('ocpp2.0.1', at(from + 10), to)] });
        await cli.call('TransactionEvent', { ...base, eventType: 'Ended', timestamp: at(from + 20), triggerReason: 'StopAuthorized', seqNo: seq++, meterValue: [energyValue('ocpp2.0.1', at(from + 20), id === 'A' ? 3000 : 5500)] });
      }
    });
    await check(ch201.chargerId);
  });

  it('1.6: transactionData registers that are meterStart and meterStop written coarser are the same readings, not a hold', async () => {
    const ch = await withCharger('ocpp1.6', async (cli) => {
      const tx = await start16(cli, 0, 200_003);
      await cli.call('StopTransaction', {
        transactionId: tx, meterStop: 207_004, timestamp: at(60),
        transactionData: [
          { timestamp: at(0), sampledValue: [{ value: '200.00', unit: 'kWh', context: 'Transaction.Begin' }] },
          { timestamp: at(60), sampledValue: [{ value: '207.00', unit: 'kWh', context: 'Transaction.End' }] },
          // a value that is not a rounding of meterStop is a reading of its own, as before
          { timestamp: at(30), sampledValue: [{ value: '203.50', unit: 'kWh' }] },
        ],
      });
    });
    const [s] = await sessionsOf(ch.chargerId);
    expect([s!.energy_wh, s!.review_status, s!.held_wh]).toEqual(['7001', null, '0']);
    expect((await readingsOf(ch.chargerId)).map((r) => r.wh)).toEqual(['200003', '203500', '207004']);
    expect(await svc.deps.metrics.getSingleMetricAsString('ocpp_quirks_total')).toContain('kind="rounded_register"');

    // the same copies sent in MeterValues of their own (Transaction.Begin after the start, Transaction.End after the stop)
    const ch2 = await withCharger('ocpp1.6', async (cli) => {
      const tx = await start16(cli, 0, 300_003);
      await cli.call('MeterValues', { connectorId: 1, transactionId: tx, meterValue: [{ timestamp: at(0), sampledValue: [{ value: '300.00', unit: 'kWh', context: 'Transaction.Begin' }] }] });
      await cli.call('MeterValues', { connectorId: 1, transactionId: tx, meterValue: [{ timestamp: at(30), sampledValue: [{ value: '303.5', unit: 'kWh' }] }] });
      await cli.call('StopTransaction', { transactionId: tx, meterStop: 307_004, timestamp: at(60) });
      await cli.call('MeterValues', { connectorId: 1, transactionId: tx, meterValue: [{ timestamp: at(60), sampledValue: [{ value: '307.0', unit: 'kWh', context: 'Transaction.End' }] }] });
    });
    const [s2] = await sessionsOf(ch2.chargerId);
    expect([s2!.energy_wh, s2!.review_status, s2!.held_wh]).toEqual(['7001', null, '0']);
    expect((await readingsOf(ch2.chargerId)).map((r) => r.wh)).toEqual(['300003', '303500', '307004']);
  });

  it('2.0.1: a transaction id the charger reuses after a reset names a new session; a replay of the old one does not', async () => {
    const ch = await withCharger('ocpp2.0.1', async (cli) => {
      const tx = async (id: string, from: number, wh: [number, number, number], seq: number) => {
        const base = { transactionInfo: { transactionId: id }, evse: { id: 1, connectorId: 1 } };
        await cli.call('TransactionEvent', { ...base, eventType: 'Started', timestamp: at(from), triggerReason: 'Authorized', seqNo: seq, meterValue: [energyValue('ocpp2.0.1', at(from), wh[0])] });
        await cli.call('TransactionEvent', { ...base, eventType: 'Updated', timestamp: at(from + 5), triggerReason: 'MeterValuePeriodic', seqNo: seq + 1, meterValue: [energyValue('ocpp2.0.1', at(from + 5), wh[1])] });
        await cli.call('TransactionEvent', { ...base, eventType: 'Ended', timestamp: at(from + 10), triggerReason: 'StopAuthorized', seqNo: seq + 2, meterValue: [energyValue('ocpp2.0.1', at(from + 10), wh[2])] });
      };
      await tx('1', 0, [10_000, 10_400, 10_800], 0);
      await tx('2', 15, [10_800, 11_300, 11_800], 3);
      // the same Started of "1" again (a queue resent after a reconnect): a replay, nothing new
      await cli.call('TransactionEvent', { transactionInfo: { transactionId: '1' }, evse: { id: 1, connectorId: 1 }, eventType: 'Started', timestamp: at(0), triggerReason: 'Authorized', seqNo: 0, meterValue: [energyValue('ocpp2.0.1', at(0), 10_000)] });
      // the counter restarted: "1" names a new transaction
      await tx('1', 30, [11_800, 12_200, 12_500], 0);
      // an Updated and Ended under "2" again whose Started was lost: a new session too
      const two = { transactionInfo: { transactionId: '2' }, evse: { id: 1, connectorId: 1 } };
      await cli.call('TransactionEvent', { ...two, eventType: 'Updated', timestamp: at(45), triggerReason: 'MeterValuePeriodic', seqNo: 4, meterValue: [energyValue('ocpp2.0.1', at(45), 12_600)] });
      await cli.call('TransactionEvent', { ...two, eventType: 'Ended', timestamp: at(50), triggerReason: 'StopAuthorized', seqNo: 5, meterValue: [energyValue('ocpp2.0.1', at(50), 12_900)] });
    });
    const s = await sessionsOf(ch.chargerId);
    expect(s.map((x) => [x.transaction_id, x.transaction_generation, x.energy_wh, x.status, x.started_at.toISOString()])).toEqual([
      ['1', 0, '800', 'completed', new Date(T0).toISOString()],
      ['2', 0, '1000', 'completed', new Date(T0 + 15 * 60_000).toISOString()],
      ['1', 1, '700', 'completed', new Date(T0 + 30 * 60_000).toISOString()],
      ['2', 1, '300', 'completed', new Date(T0 + 45 * 60_000).toISOString()],
    ]);
    // every Wh once: 800 + 1,000 + 700 + 300 (the register moved 2,900 Wh; 12,500 → 12,600 fell between two sessions)
    const months = await monthlyChargerEnergy(svc.deps, [ch.chargerId]);
    expect([...months.values()].reduce((n, m) => n + m.wh, 0n)).toBe(2_800n);
  });

  it('2.0.1: a token that comes with an Updated (plug in, then authorize) is kept on the session', async () => {
    const ch = await withCharger('ocpp2.0.1', async (cli) => {
      const base = { transactionInfo: { transactionId: 'PLUG-1' }, evse: { id: 1, connectorId: 1 } };
      await cli.call('TransactionEvent', { ...base, eventType: 'Started', timestamp: at(0), triggerReason: 'CablePluggedIn', seqNo: 0, meterValue: [energyValue('ocpp2.0.1', at(0), 1000)] });
      expect(
        await cli.call('TransactionEvent', { ...base, eventType: 'Updated', timestamp: at(1), triggerReason: 'Authorized', seqNo: 1, idToken: { idToken: 'RFID1', type: 'ISO14443' } }),
      ).toEqual({ idTokenInfo: { status: 'Accepted' } });
      // a later token does not replace the one that authorized the charge
      await cli.call('TransactionEvent', { ...base, eventType: 'Ended', timestamp: at(5), triggerReason: 'StopAuthorized', seqNo: 2, idToken: { idToken: 'OTHER', type: 'ISO14443' }, meterValue: [energyValue('ocpp2.0.1', at(5), 1500)] });
    });
    expect((await sessionsOf(ch.chargerId)).map((x) => [x.transaction_id, x.id_tag, x.energy_wh])).toEqual([['PLUG-1', 'RFID1', '500']]);
  });
});
