// C4.5: the incremental energy update (in-order readings) gives exactly what the full recompute gives, and
// out-of-order / replayed / late deliveries of the same readings (which take the full recompute) agree with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RPCClient } from 'ocpp-rpc';
import { loadBundledCatalog } from '../../src/domain/catalog/load.ts';
import { ANOMALY, maxPowerW } from '../../src/domain/charging/readings.ts';
import { recomputeSession } from '../../src/domain/charging/session-energy.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline, isoSeconds } from '../helpers/ocpp-factories.ts';

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

/** minute → register Wh: a plausible run, an implausible jump (minute 3), a backwards step (minute 5), a zero step (minute 8) */
const READINGS: Array<[number, number]> = [
  [1, 10_200],
  [2, 10_400],
  [3, 60_400],
  [4, 60_600],
  [5, 300],
  [6, 500],
  [7, 700],
  [8, 700],
  [9, 900],
];
const METER_START = 10_000;
const METER_STOP = 1_100; // minute 10

async function snapshot(sessionId: string) {
  const s = await svc.deps.db
    .selectFrom('charging_sessions')
    .select(['energy_wh', 'last_meter_wh', 'last_reading_at', 'meter_start_wh', 'meter_stop_wh', 'status'])
    .where('id', '=', sessionId)
    .executeTakeFirstOrThrow();
  const readings = await svc.deps.db
    .selectFrom('meter_readings')
    .select(['measured_at', 'wh', 'anomaly', 'session_id'])
    .where('session_id', '=', sessionId)
    .orderBy('measured_at')
    .orderBy('wh')
    .execute();
  return { ...s, last_reading_at: s.last_reading_at?.toISOString() ?? null, readings: readings.map((r) => [r.measured_at.toISOString(), r.wh, r.anomaly]) };
}

/** Runs a session on a fresh charger: start at minute 0, the given MeterValues messages, stop at minute 10. */
async function runSession(messages: Array<Array<[number, number]>>, opts: { withTransactionId: boolean; lateAfterStop?: Array<[number, number]> }) {
  const ch = await anOcppCharger(svc, user);
  const cli: RPCClient = await connectCharger(svc, ch, 'ocpp1.6');
  try {
    const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: METER_START, timestamp: at(0) })) as {
      transactionId: number;
    };
    const send = (list: Array<[number, number]>) =>
      cli.call('MeterValues', {
        connectorId: 1,
        ...(opts.withTransactionId ? { transactionId } : {}),
        meterValue: list.map(([m, wh]) => energyValue('ocpp1.6', at(m), wh)),
      });
    for (const m of messages) await send(m);
    await cli.call('StopTransaction', { transactionId, idTag: 'TAG', meterStop: METER_STOP, timestamp: at(10) });
    if (opts.lateAfterStop) await send(opts.lateAfterStop);
  } finally {
    await cli.close();
  }
  const session = await svc.deps.db.selectFrom('charging_sessions').select('id').where('charger_id', '=', ch.chargerId).executeTakeFirstOrThrow();
  const maxW = await maxPowerW(svc.deps.db, ch.chargerId, svc.deps.config.OCPP_MAX_POWER_W);
  return { sessionId: session.id, maxW };
}

/** The same over OCPP 2.0.1: Started at minute 0, the given TransactionEvent Updated messages, Ended at minute 10. */
async function runSession201(messages: Array<Array<[number, number]>>) {
  const ch = await anOcppCharger(svc, user);
  const cli: RPCClient = await connectCharger(svc, ch, 'ocpp2.0.1');
  const base = { transactionInfo: { transactionId: `T-${ch.chargerId.slice(0, 8)}` }, evse: { id: 1, connectorId: 1 } };
  let seqNo = 0;
  try {
    await cli.call('TransactionEvent', {
      ...base, eventType: 'Started', timestamp: at(0), triggerReason: 'Authorized', seqNo: seqNo++,
      meterValue: [energyValue('ocpp2.0.1', at(0), METER_START, { context: 'Transaction.Begin' })],
    });
    for (const m of messages) {
      await cli.call('TransactionEvent', {
        ...base, eventType: 'Updated', timestamp: at(m[0]![0]), triggerReason: 'MeterValuePeriodic', seqNo: seqNo++,
        meterValue: m.map(([min, wh]) => energyValue('ocpp2.0.1', at(min), wh)),
      });
    }
    await cli.call('TransactionEvent', {
      ...base, eventType: 'Ended', timestamp: at(10), triggerReason: 'StopAuthorized', seqNo: seqNo++,
      meterValue: [energyValue('ocpp2.0.1', at(10), METER_STOP, { context: 'Transaction.End' })],
    });
  } finally {
    await cli.close();
  }
  const session = await svc.deps.db.selectFrom('charging_sessions').select('id').where('charger_id', '=', ch.chargerId).executeTakeFirstOrThrow();
  const maxW = await maxPowerW(svc.deps.db, ch.chargerId, svc.deps.config.OCPP_MAX_POWER_W);
  return { sessionId: session.id, maxW };
}

/** The stored state equals what the full recompute makes of the same rows. */
async function expectRecomputeAgrees(sessionId: string, maxW: number) {
  const stored = await snapshot(sessionId);
  await recomputeSession(svc.deps.db, sessionId, maxW);
  expect(await snapshot(sessionId)).toEqual(stored);
  // and from scratch: anomalies cleared and energy zeroed, the recompute rebuilds the same state
  await svc.deps.db.updateTable('meter_readings').set({ anomaly: null }).where('session_id', '=', sessionId).execute();
  await svc.deps.db.updateTable('charging_sessions').set({ energy_wh: '0', last_meter_wh: null, last_reading_at: null }).where('id', '=', sessionId).execute();
  await recomputeSession(svc.deps.db, sessionId, maxW);
  expect(await snapshot(sessionId)).toEqual(stored);
  return stored;
}

describe('incremental energy update (C4.5)', () => {
  let inOrder: Awaited<ReturnType<typeof snapshot>>;

  it('in order, one reading per message: counts plausible forward steps, flags the jump and the backwards step', async () => {
    const { sessionId, maxW } = await runSession(
      READINGS.map((r) => [r]),
      { withTransactionId: true },
    );
    inOrder = await expectRecomputeAgrees(sessionId, maxW);
    // 200+200 (jump held out) +200 (backwards counts 0) +200+200+0+200 +200 to the stop
    expect(inOrder.energy_wh).toBe('1400');
    expect(inOrder.last_meter_wh).toBe(String(METER_STOP));
    expect(inOrder.meter_start_wh).toBe(String(METER_START));
    expect(inOrder.meter_stop_wh).toBe(String(METER_STOP));
    expect(inOrder.last_reading_at).toBe(new Date(T0 + 10 * 60_000).toISOString());
    const flagged = inOrder.readings.filter((r) => r[2] !== null).map((r) => [r[1], r[2]]);
    expect(flagged).toEqual([
      ['60400', ANOMALY.implausible],
      ['300', ANOMALY.backwards],
    ]);
    expect(inOrder.readings).toHaveLength(READINGS.length + 2);
  });

  it('in order, several readings per message, attached by connector and time: the same result', async () => {
    const { sessionId, maxW } = await runSession([READINGS.slice(0, 3), READINGS.slice(3, 4), READINGS.slice(4)], { withTransactionId: false });
    expect(await expectRecomputeAgrees(sessionId, maxW)).toEqual(inOrder);
  });

  it('out of order, reversed within a message and replayed: the same result', async () => {
    const r = (m: number) => READINGS[m - 1]!;
    const messages = [[r(6), r(7)], [r(1)], [r(9), r(8)], [r(2), r(3), r(4), r(5)], [r(6), r(7)], [r(1)], [r(9)]];
    const { sessionId, maxW } = await runSession(messages, { withTransactionId: true });
    expect(await expectRecomputeAgrees(sessionId, maxW)).toEqual(inOrder);
  });

  it('2.0.1 TransactionEvent Updated, in order and then out of order with replays: the same result', async () => {
    const a = await runSession201(READINGS.map((r) => [r]));
    expect(await expectRecomputeAgrees(a.sessionId, a.maxW)).toEqual(inOrder);
    const r = (m: number) => READINGS[m - 1]!;
    const b = await runSession201([[r(4), r(5)], [r(1), r(2), r(3)], [r(9)], [r(6), r(7), r(8)], [r(4), r(5)]]);
    expect(await expectRecomputeAgrees(b.sessionId, b.maxW)).toEqual(inOrder);
  });

  it('a late batch after the stop (the first half arriving last) and a replay of it: the same result', async () => {
    const { sessionId, maxW } = await runSession([READINGS.slice(4).map((x) => x)], {
      withTransactionId: true,
      lateAfterStop: READINGS.slice(0, 4),
    });
    expect(await expectRecomputeAgrees(sessionId, maxW)).toEqual(inOrder);
  });
});
