// An outside audit with real firmware's variations (D255, D256, D257): RFC 3339's other spellings of a time, the
// answer to a start that is quarantined for its data, a clock reset to 2000-01-01, and every OCPP measurand.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RPCClient } from 'ocpp-rpc';
import { loadBundledCatalog } from '../../src/domain/catalog/load.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, bootPayload, connectCharger, energyValue, hourAgoTimeline, isoSeconds, type OcppProtocol, type TestCharger, withConnectedCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let user: { userId: string; token: string };
const { T0, at } = hourAgoTimeline();
const iso = (min: number) => new Date(T0 + min * 60_000).toISOString();

beforeAll(async () => {
  svc = await createTestService({ listen: true });
  await loadBundledCatalog(svc.deps.db);
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

const withCharger = (protocol: OcppProtocol, fn: (cli: RPCClient, ch: TestCharger) => Promise<void>) => withConnectedCharger(svc, user, protocol, fn);
const sessionsOf = (chargerId: string) =>
  svc.deps.db
    .selectFrom('charging_sessions')
    .select(['transaction_id', 'status', 'started_at', 'ended_at', 'meter_start_wh', 'meter_stop_wh', 'energy_wh', 'held_wh', 'review_status', 'end_provisional'])
    .where('charger_id', '=', chargerId)
    .orderBy('started_at')
    .execute();
const readingsOf = (chargerId: string) =>
  svc.deps.db.selectFrom('meter_readings').select(['measured_at', 'wh', 'anomaly']).where('charger_id', '=', chargerId).orderBy('measured_at').execute();
const quarantineOf = (chargerId: string) =>
  svc.deps.db.selectFrom('ocpp_quarantine').select(['kind', 'action', 'reason', 'ack']).where('charger_id', '=', chargerId).orderBy('id').execute();

/** RFC 3339 §5.6 NOTE's other spellings of the instant `min` minutes after T0 */
const lower = (min: number) => at(min).replace('T', 't').replace('Z', 'z');
const spaced = (min: number) => at(min).replace('T', ' ');
/** the same instant as local time at +01:00, with a space for the T */
const spacedOffset = (min: number) => `${isoSeconds(T0 + min * 60_000 + 3_600_000).slice(0, 19).replace('T', ' ')}+01:00`;

let seq = 0;
const txEvent = (id: string, eventType: 'Started' | 'Updated' | 'Ended', timestamp: string, wh: number | null, extra: Record<string, unknown> = {}) => ({
  eventType,
  timestamp,
  triggerReason: eventType === 'Started' ? 'Authorized' : eventType === 'Ended' ? 'StopAuthorized' : 'MeterValuePeriodic',
  seqNo: seq++,
  transactionInfo: { transactionId: id },
  evse: { id: 1, connectorId: 1 },
  ...(wh === null ? {} : { meterValue: [energyValue('ocpp2.0.1', timestamp, wh)] }),
  ...extra,
});

async function setPolicy(chargerId: string, tokens: Array<{ id_token: string; status: string }>) {
  const put = await svc.app.inject({
    method: 'PUT',
    url: `/admin/chargers/${chargerId}/id-tokens`,
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    payload: { policy: 'list', tokens },
  });
  expect(put.statusCode).toBe(200);
}

describe('D255: RFC 3339 spellings of a zoned time are read as the upper-case form', () => {
  it('1.6: lower-case t/z, a space for the T (with Z or an offset) make the session they say', async () => {
    const ch = await withCharger('ocpp1.6', async (cli) => {
      const { transactionId, idTagInfo } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 1_000_000, timestamp: lower(0) })) as {
        transactionId: number;
        idTagInfo: { status: string };
      };
      expect(idTagInfo.status).toBe('Accepted');
      await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', spaced(1), 1_000_100)] });
      // zone-less with a lower-case t: read as UTC, as the upper-case zone-less form is
      await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', lower(2).slice(0, -1), 1_000_200)] });
      await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', spacedOffset(3), 1_000_300)] });
      expect(await cli.call('StopTransaction', { transactionId, meterStop: 1_000_400, timestamp: spaced(4) })).toEqual({});
    });
    // before: every message quarantined ("timestamp is not an ISO 8601 timestamp"), no session, 400 Wh in no view
    expect(await quarantineOf(ch.chargerId)).toEqual([]);
    const [s] = await sessionsOf(ch.chargerId);
    expect(s).toMatchObject({ status: 'completed', started_at: new Date(iso(0)), ended_at: new Date(iso(4)), energy_wh: '400', review_status: null });
    expect((await readingsOf(ch.chargerId)).map((r) => [r.measured_at.toISOString(), r.wh])).toEqual([
      [iso(0), '1000000'],
      [iso(1), '1000100'],
      [iso(2), '1000200'],
      [iso(3), '1000300'],
      [iso(4), '1000400'],
    ]);
  });

  it('2.0.1: TransactionEvent and MeterValues in those spellings', async () => {
    const ch = await withCharger('ocpp2.0.1', async (cli) => {
      expect(await cli.call('TransactionEvent', txEvent('RFC', 'Started', lower(0), 1_000_000, { idToken: { idToken: 'TAG', type: 'ISO14443' } }))).toEqual({
        idTokenInfo: { status: 'Accepted' },
      });
      await cli.call('TransactionEvent', txEvent('RFC', 'Updated', spaced(2), 1_000_200));
      await cli.call('TransactionEvent', txEvent('RFC', 'Ended', spacedOffset(4), 1_000_400));
      await cli.call('MeterValues', { evseId: 0, meterValue: [energyValue('ocpp2.0.1', lower(5), 1_000_400)] });
    });
    expect(await quarantineOf(ch.chargerId)).toEqual([]);
    const [s] = await sessionsOf(ch.chargerId);
    expect(s).toMatchObject({ status: 'completed', started_at: new Date(iso(0)), ended_at: new Date(iso(4)), energy_wh: '400' });
    expect((await readingsOf(ch.chargerId)).map((r) => r.measured_at.toISOString())).toEqual([iso(0), iso(2), iso(4), iso(5)]);
  });
});

describe("D255: a start quarantined for its data is answered its id tag's verdict", () => {
  it("1.6: the policy's verdict (accept_all and list), Invalid without a readable tag; the message is kept with that answer", async () => {
    const ch = await withCharger('ocpp1.6', async (cli) => {
      const bad = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 1_000, timestamp: '1970-01-01T00:00:10Z' })) as { transactionId: number; idTagInfo: { status: string } };
      // before: Invalid, and a charger with StopTransactionOnInvalidId stopped the car for its clock
      expect(bad.idTagInfo).toEqual({ status: 'Accepted' });
      expect(bad.transactionId).toBeGreaterThan(0);
    });
    const [q] = await quarantineOf(ch.chargerId);
    expect(q).toMatchObject({ kind: 'message', action: 'StartTransaction', reason: expect.stringContaining('before 2015-01-01') });
    expect(q!.ack).toMatchObject({ idTagInfo: { status: 'Accepted' } });

    const listed = await anOcppCharger(svc, user);
    await setPolicy(listed.chargerId, [
      { id_token: 'GOOD', status: 'Accepted' },
      { id_token: 'BAD', status: 'Blocked' },
    ]);
    const cli = await connectCharger(svc, listed, 'ocpp1.6');
    try {
      const start = async (params: Record<string, unknown>) =>
        ((await cli.call('StartTransaction', { connectorId: 1, meterStart: 1_000, timestamp: '2000-01-01T00:00:30Z', ...params })) as { idTagInfo: { status: string } }).idTagInfo.status;
      expect(await start({ idTag: 'good' })).toBe('Accepted'); // tokens compare without case
      expect(await start({ idTag: 'BAD' })).toBe('Blocked');
      expect(await start({ idTag: 'STRANGER' })).toBe('Invalid');
      expect(await start({})).toBe('Invalid'); // no tag to judge
      // unusable for another reason than its time: the same answer
      expect(await start({ idTag: 'GOOD', timestamp: at(0), meterStart: -5 })).toBe('Accepted');
    } finally {
      await cli.close();
    }
    expect((await quarantineOf(listed.chargerId)).map((x) => [x.action, (x.ack as { idTagInfo: { status: string } }).idTagInfo.status])).toEqual([
      ['StartTransaction', 'Accepted'],
      ['StartTransaction', 'Blocked'],
      ['StartTransaction', 'Invalid'],
      ['StartTransaction', 'Invalid'],
      ['StartTransaction', 'Accepted'],
    ]);
    expect(await sessionsOf(listed.chargerId)).toEqual([]);
  });

  it('1.6 end to end: the charger keeps charging; its stop naming that transaction is quarantined, its reading kept', async () => {
    let sent = 0;
    const ch = await withCharger('ocpp1.6', async (cli) => {
      const { transactionId, idTagInfo } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 1_000_000, timestamp: '2000-01-01T00:00:30Z' })) as {
        transactionId: number;
        idTagInfo: { status: string };
      };
      expect(idTagInfo.status).toBe('Accepted');
      // the clock set again (BootNotification/Heartbeat answer): the rest of the transaction in real time
      expect(await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(2), 1_000_200)] })).toEqual({});
      expect(await cli.call('StopTransaction', { transactionId, meterStop: 1_000_400, timestamp: at(4) })).toEqual({});
      sent = transactionId;
    });
    // nothing counted from a start the gateway could not read (before: a session in January 2000); the start and
    // the stop naming its transaction id are kept in the quarantine, the reading between them is kept too
    expect(await sessionsOf(ch.chargerId)).toEqual([]);
    const q = await quarantineOf(ch.chargerId);
    expect(q[0]).toMatchObject({ action: 'StartTransaction', ack: { transactionId: sent } });
    expect(q.filter((x) => x.action === 'StopTransaction').map((x) => x.reason)).toEqual([expect.stringContaining(String(sent))]);
    const stored = (await readingsOf(ch.chargerId)).some((r) => r.wh === '1000200');
    expect(stored || q.some((x) => x.action === 'MeterValues')).toBe(true);
  });

  it('D262: the readings and the stop of a transaction whose start is quarantined stay with it, never in another session', async () => {
    let sent = 0;
    const ch = await withCharger('ocpp1.6', async (cli) => {
      // connector 2 charges in a session of its own, left open
      const other = (await cli.call('StartTransaction', { connectorId: 2, idTag: 'TAG', meterStart: 5_000_000, timestamp: at(1) })) as { transactionId: number };
      expect(other.transactionId).toBeGreaterThan(0);
      // connector 1's start is unusable (a reset clock): quarantined, answered Accepted, the car charges
      const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 1_000_000, timestamp: '2000-01-01T00:00:30Z' })) as { transactionId: number };
      sent = transactionId;
      expect(await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(2), 1_000_200)] })).toEqual({});
      expect(await cli.call('StopTransaction', { transactionId, meterStop: 1_000_400, timestamp: at(4) })).toEqual({});
    });
    // before: the stop closed connector 2's session (the one open session of the charger) with connector 1's meterStop,
    // and the reading was stored outside any session
    const sessions = await sessionsOf(ch.chargerId);
    expect(sessions.map((x) => [x.status, x.meter_stop_wh, x.end_provisional])).toEqual([['active', null, false]]);
    expect((await readingsOf(ch.chargerId)).map((r) => r.wh)).toEqual(['5000000']);
    const q = await quarantineOf(ch.chargerId);
    expect(q.map((x) => x.action)).toEqual(['StartTransaction', 'MeterValues', 'StopTransaction']);
    for (const x of q.slice(1)) expect(x.reason).toBe(`its StartTransaction (transaction id ${sent}) is in the quarantine: replay the start first, then this message`);
    // D269: the operator's lists say what the charger was told: this car was let charge under that transaction
    const admin = { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` };
    const own = await svc.app.inject({ method: 'GET', url: `/admin/chargers/${ch.chargerId}/quarantine`, headers: admin });
    expect(own.statusCode).toBe(200);
    const acks = (own.json().messages as Array<{ action: string; ack: unknown }>).map((m) => [m.action, m.ack]);
    expect(acks).toEqual([
      ['StopTransaction', null],
      ['MeterValues', null],
      ['StartTransaction', { transactionId: sent, idTagInfo: { status: 'Accepted' } }],
    ]);
    const fleet = await svc.app.inject({ method: 'GET', url: '/admin/quarantine?limit=1000', headers: admin });
    expect(fleet.statusCode).toBe(200);
    const start = (fleet.json().messages as Array<{ charger_id: string; action: string; ack: unknown }>).find((m) => m.charger_id === ch.chargerId && m.action === 'StartTransaction');
    expect(start?.ack).toEqual({ transactionId: sent, idTagInfo: { status: 'Accepted' } });
  });

  it('2.0.1: an unusable TransactionEvent that carried an idToken is answered its verdict (none without one)', async () => {
    const ch = await anOcppCharger(svc, user);
    await setPolicy(ch.chargerId, [{ id_token: 'GOOD', status: 'Accepted' }]);
    const cli = await connectCharger(svc, ch, 'ocpp2.0.1');
    try {
      const old = '1970-01-01T00:00:10Z';
      // before: {} for each (no idTokenInfo, though the request carried an idToken)
      expect(await cli.call('TransactionEvent', txEvent('Q1', 'Started', old, 1_000, { idToken: { idToken: 'GOOD', type: 'ISO14443' } }))).toEqual({ idTokenInfo: { status: 'Accepted' } });
      expect(await cli.call('TransactionEvent', txEvent('Q2', 'Started', old, 1_000, { idToken: { idToken: 'STRANGER', type: 'ISO14443' } }))).toEqual({ idTokenInfo: { status: 'Invalid' } });
      expect(await cli.call('TransactionEvent', txEvent('Q3', 'Started', old, 1_000, { idToken: { idToken: '', type: 'NoAuthorization' } }))).toEqual({ idTokenInfo: { status: 'Accepted' } });
      expect(await cli.call('TransactionEvent', txEvent('Q4', 'Started', old, 1_000))).toEqual({});
      // the rest of Q1 in real time: its session is opened from the Updated (C4.6), the Started stays quarantined
      await cli.call('TransactionEvent', txEvent('Q1', 'Updated', at(2), 1_200));
      await cli.call('TransactionEvent', txEvent('Q1', 'Ended', at(4), 1_400));
    } finally {
      await cli.close();
    }
    expect((await quarantineOf(ch.chargerId)).map((x) => x.action)).toEqual(['TransactionEvent', 'TransactionEvent', 'TransactionEvent', 'TransactionEvent']);
    expect(await sessionsOf(ch.chargerId)).toMatchObject([{ transaction_id: 'Q1', status: 'completed', started_at: new Date(iso(2)), energy_wh: '200' }]);
  });
});

describe('D256: a clock reset to 2000-01-01 (and on from there) tells no time of a charge', () => {
  it('1.6: a session stamped 2000-01-01T00:38 or two days on is quarantined whole, nothing stored in January 2000', async () => {
    for (const day of ['2000-01-01', '2000-01-03']) {
      const ch = await withCharger('ocpp1.6', async (cli) => {
        const { transactionId, idTagInfo } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 1_000_000, timestamp: `${day}T00:38:25Z` })) as {
          transactionId: number;
          idTagInfo: { status: string };
        };
        expect(idTagInfo.status).toBe('Accepted');
        expect(await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', `${day}T00:40:25Z`, 1_000_200)] })).toEqual({});
        expect(await cli.call('StopTransaction', { transactionId, meterStop: 1_000_400, timestamp: `${day}T00:42:25Z` })).toEqual({});
      });
      // before: a completed session of 400 Wh in January 2000, unflagged
      expect(await sessionsOf(ch.chargerId)).toEqual([]);
      expect(await readingsOf(ch.chargerId)).toEqual([]);
      const q = await quarantineOf(ch.chargerId);
      expect(q.map((x) => [x.action, x.reason.includes('before 2015-01-01')])).toEqual([
        ['StartTransaction', true],
        ['MeterValues', true],
        ['StopTransaction', true],
      ]);
    }
  });

  it('1.6: a clock that falls back to 2000 mid-session: its reading and stop are quarantined, not placed before the start', async () => {
    const ch = await withCharger('ocpp1.6', async (cli) => {
      const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 1_000_000, timestamp: at(0) })) as { transactionId: number };
      await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(1), 1_000_100)] });
      await cli.call('BootNotification', bootPayload('ocpp1.6')); // power loss
      expect(await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', '2000-01-01T00:01:30Z', 1_000_300)] })).toEqual({});
      expect(await cli.call('StopTransaction', { transactionId, meterStop: 1_000_400, timestamp: '2000-01-01T00:02:30Z' })).toEqual({});
    });
    // before: the 2000 reading was stored in the session, before its Transaction.Begin (register_backwards)
    expect((await readingsOf(ch.chargerId)).map((r) => [r.measured_at.toISOString(), r.wh, r.anomaly])).toEqual([
      [iso(0), '1000000', null],
      [iso(1), '1000100', null],
    ]);
    expect(await sessionsOf(ch.chargerId)).toMatchObject([{ end_provisional: true, energy_wh: '100', review_status: null }]);
    const q = await quarantineOf(ch.chargerId);
    expect(q.map((x) => [x.action, x.reason.includes('before 2015-01-01')])).toEqual([
      ['MeterValues', true],
      ['StopTransaction', true],
    ]);
  });

  it('2.0.1: a Started at 2000-01-01 is quarantined; 2015-01-01 itself is a time', async () => {
    const ch = await withCharger('ocpp2.0.1', async (cli) => {
      expect(await cli.call('TransactionEvent', txEvent('Y2K', 'Started', '2000-01-01T00:00:05Z', 1_000))).toEqual({});
      expect(await cli.call('TransactionEvent', txEvent('Y14', 'Started', '2014-12-31T23:59:59Z', 1_000))).toEqual({});
      await cli.call('MeterValues', { evseId: 0, meterValue: [energyValue('ocpp2.0.1', '2015-01-01T00:00:00Z', 1_000)] });
    });
    expect(await sessionsOf(ch.chargerId)).toEqual([]);
    expect((await readingsOf(ch.chargerId)).map((r) => r.measured_at.toISOString())).toEqual(['2015-01-01T00:00:00.000Z']);
    expect((await quarantineOf(ch.chargerId)).map((x) => x.reason.includes('before 2015-01-01'))).toEqual([true, true]);
  });

  for (const protocol of ['ocpp1.6', 'ocpp2.0.1'] as const) {
    it(`${protocol}: a StatusNotification from a reset clock still sets its connector's status`, async () => {
      const ch = await withCharger(protocol, async (cli) => {
        const status =
          protocol === 'ocpp1.6'
            ? { connectorId: 1, errorCode: 'NoError', status: 'Charging', timestamp: '1970-01-01T00:00:07Z' }
            : { timestamp: '1970-01-01T00:00:07Z', connectorStatus: 'Occupied', evseId: 1, connectorId: 1 };
        expect(await cli.call('StatusNotification', status)).toEqual({});
      });
      const st = await svc.deps.db.selectFrom('ocpp_chargers').select('connector_status').where('charger_id', '=', ch.chargerId).executeTakeFirstOrThrow();
      // before: not applied (its time was unusable), though the status does not depend on it
      expect(st.connector_status).toEqual({ 1: protocol === 'ocpp1.6' ? 'Charging' : 'Occupied' });
    });
  }
});

describe('D257: every measurand of the OCPP 1.6 and 2.0.1 enumerations is read', () => {
  const require = createRequire(import.meta.url);
  /** the measurand enumeration of the bundled OCA schema of MeterValues.req */
  function measurandsOf(file: string): string[] {
    const schemas = require(`ocpp-rpc/lib/schemas/${file}`) as Array<{ $id: string }>;
    const mv = schemas.find((s) => s.$id === 'urn:MeterValues.req')!;
    const found: string[][] = [];
    const walk = (o: unknown) => {
      if (o === null || typeof o !== 'object') return;
      const e = (o as { enum?: unknown }).enum;
      if (Array.isArray(e) && e.includes('Energy.Active.Import.Register')) found.push(e as string[]);
      for (const v of Object.values(o)) walk(v);
    };
    walk(mv);
    return found[0]!;
  }

  for (const [protocol, file] of [['ocpp1.6', 'ocpp1_6.json'], ['ocpp2.0.1', 'ocpp2_0_1.json']] as const) {
    it(`${protocol}: each one beside the register is read and ignored; a meter value of reactive values alone is no error`, async () => {
      const all = measurandsOf(file);
      expect(all).toEqual(expect.arrayContaining(['Power.Reactive.Import', 'Energy.Reactive.Import.Interval']));
      const others = all.filter((m) => m !== 'Energy.Active.Import.Register');
      const value = (measurand: string) => (protocol === 'ocpp1.6' ? { value: '1.5', measurand } : { value: 1.5, measurand });
      const connector = protocol === 'ocpp1.6' ? { connectorId: 1 } : { evseId: 1 };
      const ch = await withCharger(protocol, async (cli) => {
        const full = energyValue(protocol, at(0), 1_000_200);
        await cli.call('MeterValues', { ...connector, meterValue: [{ ...full, sampledValue: [...full.sampledValue, ...others.map(value)] }] });
        const reactive = ['Power.Reactive.Import', 'Energy.Reactive.Import.Interval', 'Energy.Reactive.Export.Interval', ...(protocol === 'ocpp2.0.1' ? ['Energy.Apparent.Import', 'Energy.Reactive.Net'] : [])];
        expect(await cli.call('MeterValues', { ...connector, meterValue: [{ timestamp: at(1), sampledValue: reactive.map(value) }] })).toEqual({});
      });
      // before: a quarantine part per such value ("measurand ... is not one of ...") and the second message whole
      expect(await quarantineOf(ch.chargerId)).toEqual([]);
      expect((await readingsOf(ch.chargerId)).map((r) => [r.measured_at.toISOString(), r.wh])).toEqual([[iso(0), '1000200']]);
    });
  }
});
