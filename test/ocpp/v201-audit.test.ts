// An outside audit of OCPP 2.0.1 ingest (D178–D185): each finding re-created from the outside, a charger over OCPP.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RPCClient } from 'ocpp-rpc';
import { loadBundledCatalog } from '../../src/domain/catalog/load.ts';
import { monthlyChargerEnergy } from '../../src/domain/energy/month-energy.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { energyValue, isoSeconds, type OcppProtocol, type TestCharger, withConnectedCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let user: { userId: string; token: string };
/** a timeline that starts 30 hours ago (whole seconds): `at(min)` is `min` minutes after T0 */
const T0 = Math.floor(Date.now() / 1000) * 1000 - 30 * 3_600_000;
const at = (min: number) => isoSeconds(T0 + min * 60_000);
const iso = (min: number) => new Date(T0 + min * 60_000).toISOString();

beforeAll(async () => {
  svc = await createTestService({ listen: true });
  await loadBundledCatalog(svc.deps.db);
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

const withCharger = (protocol: OcppProtocol, fn: (cli: RPCClient, ch: TestCharger) => Promise<void>) => withConnectedCharger(svc, user, protocol, fn);
const sessionsOf = (chargerId: string) =>
  svc.deps.db.selectFrom('charging_sessions').selectAll().where('charger_id', '=', chargerId).orderBy('transaction_generation').orderBy('started_at').execute();
const readingsOf = (chargerId: string) =>
  svc.deps.db.selectFrom('meter_readings').select(['measured_at', 'wh', 'phase', 'anomaly', 'session_id', 'connector_id']).where('charger_id', '=', chargerId).orderBy('measured_at').execute();
const quarantineOf = (chargerId: string) =>
  svc.deps.db.selectFrom('ocpp_quarantine').select(['action', 'reason']).where('charger_id', '=', chargerId).execute();
const versionsOf = async (chargerId: string) =>
  (await sql<{ g: number; x: string; u: Date }>`select transaction_generation as g, xmin::text as x, updated_at as u from charging_sessions where charger_id = ${chargerId} order by 1`.execute(svc.deps.db)).rows;
const totalWh = async (chargerId: string) => [...(await monthlyChargerEnergy(svc.deps, [chargerId])).values()].reduce((n, m) => n + m.wh, 0n);

type Ev = 'Started' | 'Updated' | 'Ended';
let seq = 0;
function txEvent(id: string, eventType: Ev, min: number, wh: number | null, extra: Record<string, unknown> = {}) {
  return {
    eventType,
    timestamp: at(min),
    triggerReason: eventType === 'Started' ? 'Authorized' : eventType === 'Ended' ? 'StopAuthorized' : 'MeterValuePeriodic',
    seqNo: seq++,
    transactionInfo: { transactionId: id, ...(eventType === 'Ended' ? { stoppedReason: 'Local' } : {}) },
    evse: { id: 1, connectorId: 1 },
    ...(wh === null ? {} : { meterValue: [energyValue('ocpp2.0.1', at(min), wh, eventType === 'Started' ? { context: 'Transaction.Begin' } : {})] }),
    ...extra,
  };
}

describe('D178: a reused transaction id, and a resent old Ended', () => {
  it('an old Ended resent after the id was reused is a replay of the old generation: the running one goes on', async () => {
    const reuse = 29 * 60; // 29 h later
    const ch = await withCharger('ocpp2.0.1', async (cli) => {
      await cli.call('TransactionEvent', txEvent('1', 'Started', 0, 10_000));
      const oldEnded = txEvent('1', 'Ended', 20, 12_000, { transactionInfo: { transactionId: '1', stoppedReason: 'EVDisconnected' } });
      await cli.call('TransactionEvent', oldEnded);
      await cli.call('TransactionEvent', txEvent('1', 'Started', reuse, 50_000));
      await cli.call('TransactionEvent', txEvent('1', 'Updated', reuse + 10, 51_000));
      // the old Ended again (a new message id): it lies within generation 0's span and says what is stored
      await cli.call('TransactionEvent', { ...oldEnded, seqNo: seq++ });
      await cli.call('TransactionEvent', txEvent('1', 'Updated', reuse + 20, 52_000));
      await cli.call('TransactionEvent', txEvent('1', 'Ended', reuse + 30, 52_500));
      // and once more after generation 1 ended: neither its end nor its reason move
      await cli.call('TransactionEvent', { ...oldEnded, seqNo: seq++ });
    });
    const s = await sessionsOf(ch.chargerId);
    expect(s.map((x) => [x.transaction_generation, x.status, x.started_at.toISOString(), x.ended_at?.toISOString(), x.stop_reason, x.energy_wh])).toEqual([
      [0, 'completed', iso(0), iso(20), 'EVDisconnected', '2000'],
      [1, 'completed', iso(reuse), iso(reuse + 30), 'Local', '2500'],
    ]);
    expect(await totalWh(ch.chargerId)).toBe(4_500n);
    expect(await quarantineOf(ch.chargerId)).toEqual([]);
  });

  it('a resent Ended of an old generation leaves both generations\' rows as they are (their row versions)', async () => {
    await withCharger('ocpp2.0.1', async (cli, ch) => {
      await cli.call('TransactionEvent', txEvent('7', 'Started', 0, 1_000));
      const oldEnded = txEvent('7', 'Ended', 10, 1_500);
      await cli.call('TransactionEvent', oldEnded);
      await cli.call('TransactionEvent', txEvent('7', 'Started', 600, 5_000));
      const before = await versionsOf(ch.chargerId);
      await cli.call('TransactionEvent', { ...oldEnded, seqNo: seq++ });
      expect(await versionsOf(ch.chargerId)).toEqual(before);
      const s = await sessionsOf(ch.chargerId);
      expect(s.map((x) => [x.transaction_generation, x.status, x.ended_at?.toISOString() ?? null])).toEqual([
        [0, 'completed', iso(10)],
        [1, 'active', null],
      ]);
    });
  });
});

describe('D178 on the set-based path: an old Ended without readings', () => {
  it('resent while the reused id runs again, it ends nothing: the group commit refuses a stop dated before its session', async () => {
    const ch = await withCharger('ocpp2.0.1', async (cli) => {
      await cli.call('TransactionEvent', txEvent('9', 'Started', 0, 20_000));
      const oldEnded = txEvent('9', 'Ended', 10, null);
      await cli.call('TransactionEvent', oldEnded);
      await cli.call('TransactionEvent', txEvent('9', 'Started', 600, 30_000));
      await cli.call('TransactionEvent', txEvent('9', 'Updated', 610, 31_000));
      await cli.call('TransactionEvent', { ...oldEnded, seqNo: seq++ });
      await cli.call('TransactionEvent', txEvent('9', 'Updated', 620, 32_000));
    });
    const s = await sessionsOf(ch.chargerId);
    expect(s.map((x) => [x.transaction_generation, x.status, x.ended_at?.toISOString() ?? null, x.energy_wh])).toEqual([
      [0, 'completed', iso(10), '0'],
      [1, 'active', null, '2000'],
    ]);
  });
});

describe('D179: a late Started', () => {
  it('after an Updated: the start time, start register and token are the Started\'s, the energy the readings\'', async () => {
    const ch = await withCharger('ocpp2.0.1', async (cli) => {
      await cli.call('TransactionEvent', txEvent('L1', 'Updated', 20, 12_000));
      const r = await cli.call('TransactionEvent', txEvent('L1', 'Started', 0, 10_000, { idToken: { idToken: 'K', type: 'ISO14443' }, offline: true }));
      expect(r).toEqual({ idTokenInfo: { status: 'Accepted' } });
      await cli.call('TransactionEvent', txEvent('L1', 'Updated', 10, 11_000));
      await cli.call('TransactionEvent', txEvent('L1', 'Ended', 30, 13_000));
    });
    const [s, ...rest] = await sessionsOf(ch.chargerId);
    expect(rest).toEqual([]);
    expect([s!.started_at.toISOString(), s!.meter_start_wh, s!.ended_at?.toISOString(), s!.meter_stop_wh, s!.energy_wh, s!.id_tag]).toEqual([
      iso(0), '10000', iso(30), '13000', '3000', 'K',
    ]);
  });

  it('after the Ended: the session starts at the Started, not at its end', async () => {
    const ch = await withCharger('ocpp2.0.1', async (cli) => {
      await cli.call('TransactionEvent', txEvent('L2', 'Ended', 30, 13_000));
      const r = await cli.call('TransactionEvent', txEvent('L2', 'Started', 0, 10_000, { idToken: { idToken: 'K', type: 'ISO14443' }, offline: true }));
      expect(r).toEqual({ idTokenInfo: { status: 'Accepted' } });
      // a second copy of the Started changes nothing; a Started later than the start does not move it later
      await cli.call('TransactionEvent', txEvent('L2', 'Started', 0, 10_000, { idToken: { idToken: 'K', type: 'ISO14443' }, offline: true }));
      await cli.call('TransactionEvent', txEvent('L2', 'Started', 5, null, { idToken: { idToken: 'OTHER', type: 'ISO14443' } }));
    });
    const [s, ...rest] = await sessionsOf(ch.chargerId);
    expect(rest).toEqual([]);
    expect([s!.status, s!.started_at.toISOString(), s!.meter_start_wh, s!.ended_at?.toISOString(), s!.meter_stop_wh, s!.energy_wh, s!.id_tag]).toEqual([
      'completed', iso(0), '10000', iso(30), '13000', '3000', 'K',
    ]);
  });
});

describe('D181: a resent transaction message that adds nothing writes nothing', () => {
  it('2.0.1: a resent Updated and a resent Ended keep their session\'s row version and updated_at', async () => {
    await withCharger('ocpp2.0.1', async (cli, ch) => {
      await cli.call('TransactionEvent', txEvent('R1', 'Started', 0, 1_000));
      const upd = txEvent('R1', 'Updated', 5, 1_200);
      await cli.call('TransactionEvent', upd);
      const afterUpdated = await versionsOf(ch.chargerId);
      await cli.call('TransactionEvent', { ...upd, seqNo: seq++ });
      await cli.call('TransactionEvent', { ...upd, seqNo: seq++ });
      expect(await versionsOf(ch.chargerId)).toEqual(afterUpdated);
      const end = txEvent('R1', 'Ended', 10, 1_500);
      await cli.call('TransactionEvent', end);
      const afterEnded = await versionsOf(ch.chargerId);
      await cli.call('TransactionEvent', { ...end, seqNo: seq++ });
      expect(await versionsOf(ch.chargerId)).toEqual(afterEnded);
      // a resent Updated after the end changes nothing either
      await cli.call('TransactionEvent', { ...upd, seqNo: seq++ });
      expect(await versionsOf(ch.chargerId)).toEqual(afterEnded);
      const [s] = await sessionsOf(ch.chargerId);
      expect([s!.status, s!.energy_wh, s!.meter_stop_wh, s!.stop_reason]).toEqual(['completed', '500', '1500', 'Local']);
    });
  });

  it('1.6: a resent StopTransaction keeps its session\'s row version and updated_at', async () => {
    await withCharger('ocpp1.6', async (cli, ch) => {
      const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'T', meterStart: 1_000, timestamp: at(0) })) as { transactionId: number };
      await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(5), 1_200)] });
      const stop = { transactionId, idTag: 'T', meterStop: 1_500, timestamp: at(10), reason: 'Local' };
      await cli.call('StopTransaction', stop);
      const after = await versionsOf(ch.chargerId);
      await cli.call('StopTransaction', stop);
      expect(await versionsOf(ch.chargerId)).toEqual(after);
      const [s] = await sessionsOf(ch.chargerId);
      expect([s!.status, s!.energy_wh, s!.meter_stop_wh, s!.ended_at?.toISOString()]).toEqual(['completed', '500', '1500', iso(10)]);
    });
  });
});
