// C5.5 held energy: a flagged step keeps the session's plausible energy in kwh and shows
// review {status, reason, held_kwh} on GET /sessions and GET /chargers current_session; an operator accepts or
// rejects it (admin API and CLI), after which the session, the monthly aggregation and GET /energy follow.
// Holds: implausible_power, future_timestamp (more than 5 minutes ahead of the gateway's clock),
// register_too_slow (a kWh value sent as Wh, shown by Power.Active.Import) and invalid_signature (OCMF), the last on
// both ingest paths.
import type { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli } from '../../src/cli/admin.ts';
import { foldSteps, noTotals, stepOf } from '../../src/domain/charging/readings.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { anAccountWithConnection } from '../helpers/energy-factories.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { aMeter, signedMeterValue, signedReading } from '../helpers/ocmf-signer.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline, isoSeconds, type OcppProtocol, type TestCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let user: { userId: string; token: string };
const { T0, at } = hourAgoTimeline();

beforeAll(async () => {
  svc = await createTestService({ listen: true });
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

async function cli(args: string[]): Promise<{ code: number; out: unknown }> {
  let out = '';
  const code = await runAdminCli(args, { ADMIN_TOKEN: svc.config.ADMIN_TOKEN, ADMIN_URL: svc.url }, { out: (t) => (out += t), err: (t) => (out += t) });
  return { code, out: code === 0 ? JSON.parse(out) : out };
}

/** A connected charger on an ERE-eligible account of `user` (MID, machtiging in force since 2026-01-01). */
async function anEligibleCharger(protocol: OcppProtocol): Promise<{ ch: TestCharger; cli: RPCClient; connectionId: string }> {
  const acc = await anAccountWithConnection(svc.deps, { eligible: true, ownerUserId: user.userId });
  const ch = await anOcppCharger(svc, user);
  const c = await connectCharger(svc, ch, protocol);
  await svc.deps.db.updateTable('chargers').set({ account_id: acc.accountId, mid_certified: true }).where('id', '=', ch.chargerId).execute();
  return { ch, cli: c, connectionId: acc.connectionId };
}

const sessionOf = async (chargerId: string) =>
  svc.deps.db.selectFrom('charging_sessions').selectAll().where('charger_id', '=', chargerId).executeTakeFirstOrThrow();

async function sessionItem(sessionId: string) {
  const res = await svc.app.inject({ method: 'GET', url: '/sessions?limit=100', headers: bearer(user.token) });
  expect(res.statusCode).toBe(200);
  return (res.json().sessions as Array<{ id: string; kwh: number; review: unknown }>).find((s) => s.id === sessionId)!;
}

/** Runs the energy-aggregate job; the connection's monthly rows as Wh. */
async function monthWh(connectionId: string): Promise<Array<string | null>> {
  const res = await svc.app.inject({ method: 'POST', url: '/admin/jobs/energy-aggregate/run', headers: bearer(TEST_ADMIN_TOKEN) });
  expect(res.statusCode).toBe(200);
  const rows = await svc.deps.db.selectFrom('energy_months').select('wh').where('connection_id', '=', connectionId).execute();
  return rows.map((r) => r.wh);
}

/** 1.6: start at minute 0 (10,000 Wh), 10,200 at minute 1, 60,200 at minute 2 (50 kWh in a minute), 60,400 at 3. */
async function sessionWithAJump(c: RPCClient): Promise<number> {
  const { transactionId } = (await c.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 10_000, timestamp: at(0) })) as { transactionId: number };
  await c.call('MeterValues', {
    connectorId: 1,
    transactionId,
    meterValue: [energyValue('ocpp1.6', at(1), 10_200), energyValue('ocpp1.6', at(2), 60_200), energyValue('ocpp1.6', at(3), 60_400)],
  });
  return transactionId;
}

describe('an implausible step (C5.5)', () => {
  it('is held and shown; accepted through the CLI, it counts in the session, the month and GET /energy', async () => {
    const { ch, cli: c, connectionId } = await anEligibleCharger('ocpp1.6');
    try {
      const transactionId = await sessionWithAJump(c);
      const held = { status: 'held', reason: 'implausible_power', held_kwh: 50 };
      // while charging: GET /chargers current_session
      const chargers = await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(user.token) });
      const item = (chargers.json().chargers as Array<{ id: string; current_session?: { kwh_so_far: number; review: unknown } }>).find((x) => x.id === ch.chargerId)!;
      expect(item.current_session).toMatchObject({ kwh_so_far: 0.4, review: held });
      await c.call('StopTransaction', { transactionId, meterStop: 60_600, timestamp: at(4), idTag: 'TAG' });
    } finally {
      await c.close();
    }
    const s = await sessionOf(ch.chargerId);
    expect(s).toMatchObject({ energy_wh: '600', held_wh: '50000', review_status: 'held', review_reason: 'implausible_power' });
    expect(await sessionItem(s.id)).toMatchObject({ kwh: 0.6, review: { status: 'held', reason: 'implausible_power', held_kwh: 50 } });
    expect(await monthWh(connectionId)).toEqual(['600']);

    // the operator's list, then the decision through the CLI
    const list = await cli(['held-sessions', '--limit', '500']);
    expect(list.code).toBe(0);
    expect((list.out as { sessions: Array<{ session_id: string }> }).sessions.map((x) => x.session_id)).toContain(s.id);
    const decided = await cli(['review-session', s.id, 'accept']);
    expect(decided).toEqual({
      code: 0,
      out: { session_id: s.id, charger_id: ch.chargerId, kwh: 50.6, review: { status: 'accepted', reason: 'implausible_power', held_kwh: 0 }, decided_steps: 1 },
    });
    expect(await sessionItem(s.id)).toMatchObject({ kwh: 50.6, review: { status: 'accepted', reason: 'implausible_power', held_kwh: 0 } });
    expect(await monthWh(connectionId)).toEqual(['50600']);
    const energy = await svc.app.inject({ method: 'GET', url: '/energy', headers: bearer(user.token) });
    expect(energy.statusCode).toBe(200);
    expect(energy.json().total_kwh).toBeGreaterThanOrEqual(50.6);
    // nothing is held any more: a second decision is refused
    const again = await svc.app.inject({ method: 'POST', url: `/admin/sessions/${s.id}/review`, headers: bearer(TEST_ADMIN_TOKEN), payload: { decision: 'reject' } });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ error: 'session_not_held' });
  });

  it('rejected, it never counts', async () => {
    const { ch, cli: c, connectionId } = await anEligibleCharger('ocpp1.6');
    try {
      const transactionId = await sessionWithAJump(c);
      await c.call('StopTransaction', { transactionId, meterStop: 60_600, timestamp: at(4), idTag: 'TAG' });
    } finally {
      await c.close();
    }
    const s = await sessionOf(ch.chargerId);
    const res = await svc.app.inject({ method: 'POST', url: `/admin/sessions/${s.id}/review`, headers: bearer(TEST_ADMIN_TOKEN), payload: { decision: 'reject' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ kwh: 0.6, review: { status: 'rejected', reason: 'implausible_power', held_kwh: 0 } });
    expect(await sessionItem(s.id)).toMatchObject({ kwh: 0.6, review: { status: 'rejected' } });
    expect(await monthWh(connectionId)).toEqual(['600']);
    const readings = await svc.deps.db.selectFrom('meter_readings').select(['wh', 'anomaly', 'review']).where('session_id', '=', s.id).orderBy('measured_at').execute();
    expect(readings.filter((r) => r.anomaly !== null)).toEqual([{ wh: '60200', anomaly: 'implausible_power', review: 'rejected' }]);
  });

  it('the admin API answers 404 for an unknown session and 400 for another decision', async () => {
    const unknown = await svc.app.inject({ method: 'POST', url: '/admin/sessions/00000000-0000-4000-8000-000000000000/review', headers: bearer(TEST_ADMIN_TOKEN), payload: { decision: 'accept' } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'session_not_found' });
    const bad = await svc.app.inject({ method: 'POST', url: '/admin/sessions/00000000-0000-4000-8000-000000000000/review', headers: bearer(TEST_ADMIN_TOKEN), payload: { decision: 'maybe' } });
    expect(bad.statusCode).toBe(400);
    expect((await cli(['review-session', 'x', 'maybe'])).code).toBe(2);
  });
});

describe('a 1.6 meterStop stamped in the second of the last MeterValues (D107)', () => {
  it('counts its few Wh (not held as implausible power), and the charger shows the stop value as its meter', async () => {
    const { ch, cli: c } = await anEligibleCharger('ocpp1.6');
    try {
      const { transactionId } = (await c.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 3_000_000, timestamp: at(0) })) as { transactionId: number };
      await c.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(10), 3_001_200)] });
      await c.call('StopTransaction', { transactionId, meterStop: 3_001_203, timestamp: at(10) });
    } finally {
      await c.close();
    }
    const s = await sessionOf(ch.chargerId);
    expect(s).toMatchObject({ status: 'completed', energy_wh: '1203', held_wh: '0', review_status: null });
    const res = await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(user.token) });
    const item = (res.json().chargers as Array<{ id: string; latest_meter_wh?: number }>).find((x) => x.id === ch.chargerId);
    expect(item?.latest_meter_wh).toBe(3_001_203);
  });
});

describe('readings stamped ahead of the gateway clock (future_timestamp)', () => {
  it('a reading more than 5 minutes ahead is held; one within 5 minutes counts', async () => {
    const ch = await anOcppCharger(svc, user);
    const c = await connectCharger(svc, ch, 'ocpp2.0.1');
    const now = Date.now();
    const tx = { transactionId: 'FUT-1' };
    try {
      await c.call('TransactionEvent', {
        eventType: 'Started', timestamp: at(0), triggerReason: 'Authorized', seqNo: 0, transactionInfo: tx, evse: { id: 1, connectorId: 1 },
        meterValue: [energyValue('ocpp2.0.1', at(0), 1_000)],
      });
      // 3 minutes ahead: a clock slightly off, counted; two hours ahead: held
      await c.call('TransactionEvent', {
        eventType: 'Updated', timestamp: at(1), triggerReason: 'MeterValuePeriodic', seqNo: 1, transactionInfo: tx, evse: { id: 1, connectorId: 1 },
        meterValue: [energyValue('ocpp2.0.1', isoSeconds(now + 3 * 60_000), 1_100), energyValue('ocpp2.0.1', isoSeconds(now + 2 * 3_600_000), 1_500)],
      });
    } finally {
      await c.close();
    }
    const s = await sessionOf(ch.chargerId);
    expect(s).toMatchObject({ energy_wh: '100', held_wh: '400', review_status: 'held', review_reason: 'future_timestamp' });
    expect(await sessionItem(s.id)).toMatchObject({ kwh: 0.1, review: { status: 'held', reason: 'future_timestamp', held_kwh: 0.4 } });
    // D122: the meter's present value is not the reading stamped two hours ahead
    const res = await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(user.token) });
    const item = (res.json().chargers as Array<{ id: string; latest_meter_wh?: number; meter_updated_at?: string }>).find((x) => x.id === ch.chargerId);
    expect(item).toMatchObject({ latest_meter_wh: 1_100, meter_updated_at: isoSeconds(now + 3 * 60_000) });
  });
});

describe('a kWh value sent as Wh (register_too_slow)', () => {
  /** 1.6 W or 2.0.1 kW power beside the register */
  const withPower = (protocol: OcppProtocol, timestamp: string, wh: string, w: number | null) => {
    const mv = energyValue(protocol, timestamp, wh);
    if (w === null) return mv;
    const power = protocol === 'ocpp1.6' ? { value: String(w), measurand: 'Power.Active.Import', unit: 'W' } : { value: w / 1000, measurand: 'Power.Active.Import', unitOfMeasure: { unit: 'kW' } };
    return { ...mv, sampledValue: [...mv.sampledValue, power] };
  };

  async function run(protocol: OcppProtocol, values: Array<[number, string, number | null]>) {
    const ch = await anOcppCharger(svc, user);
    const c = await connectCharger(svc, ch, protocol);
    const tx = { transactionId: `SLOW-${ch.chargerId}` };
    try {
      for (const [i, [min, wh, w]] of values.entries()) {
        const meterValue = [withPower(protocol, at(min), wh, w)];
        if (protocol === 'ocpp1.6') {
          if (i === 0) {
            const r = (await c.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: Math.round(Number(wh)), timestamp: at(min) })) as { transactionId: number };
            tx.transactionId = String(r.transactionId);
          }
          await c.call('MeterValues', { connectorId: 1, transactionId: Number(tx.transactionId), meterValue });
        } else {
          await c.call('TransactionEvent', {
            eventType: i === 0 ? 'Started' : 'Updated', timestamp: at(min), triggerReason: i === 0 ? 'Authorized' : 'MeterValuePeriodic', seqNo: i,
            transactionInfo: tx, evse: { id: 1, connectorId: 1 }, meterValue,
          });
        }
      }
    } finally {
      await c.close();
    }
    return sessionOf(ch.chargerId);
  }

  // a register at 12.345 kWh sent as "12.345" Wh while the charger delivers 7.4 kW: every 5 minutes it moves 1 Wh
  // where 616 Wh were delivered
  const creeping: Array<[number, string, number | null]> = [
    [0, '12.345', 7_400],
    [5, '12.962', 7_400],
    [10, '13.578', 7_400],
  ];

  it.each(['ocpp1.6', 'ocpp2.0.1'] as const)('%s: held where Power.Active.Import shows real power', async (protocol) => {
    const s = await run(protocol, creeping);
    expect(s).toMatchObject({ review_status: 'held', review_reason: 'register_too_slow', energy_wh: '0' });
    const readings = await svc.deps.db.selectFrom('meter_readings').select(['anomaly', 'power_w']).where('session_id', '=', s.id).orderBy('measured_at').execute();
    expect(readings.map((r) => r.power_w)).toEqual(readings.map(() => 7_400));
    expect(readings.slice(1).every((r) => r.anomaly === 'register_too_slow')).toBe(true);
    expect(await sessionItem(s.id)).toMatchObject({ review: { status: 'held', reason: 'register_too_slow' } });
  });

  it('not held without power values, nor when the register keeps up with the power', async () => {
    const silent = await run('ocpp1.6', creeping.map(([m, wh]) => [m, wh, null]));
    expect(silent).toMatchObject({ review_status: null, held_wh: '0' });
    const honest = await run('ocpp1.6', [
      [0, '12345', 7_400],
      [5, '12962', 7_400],
      [10, '13578', 7_400],
    ]);
    expect(honest).toMatchObject({ review_status: null, energy_wh: '1233' });
    expect(await sessionItem(honest.id)).toMatchObject({ kwh: 1.23, review: null });
  });
});

describe('the step rule and the review state (readings.ts)', () => {
  const p = (min: number, wh: number, w: number | null = null) => ({ wh: BigInt(wh), at: min * 60_000, w });

  it('a step of less than a second is judged over one second, the resolution of timestamps (D107)', () => {
    const s = (ms: number, wh: number) => ({ wh: BigInt(wh), at: ms });
    // 22 kW × 1 s × 110 % = 6.7 Wh, + 1 Wh of rounding slack
    expect(stepOf(s(0, 1000), s(0, 1003), 22_000).anomaly).toBe(null);
    expect(stepOf(s(0, 1000), s(400, 1007), 22_000).anomaly).toBe(null);
    expect(stepOf(s(0, 1000), s(0, 1008), 22_000).anomaly).toBe('implausible_power');
    expect(stepOf(s(0, 1000), s(2_000, 1014), 22_000).anomaly).toBe(null); // longer steps as before: 13.4 + 1
    expect(stepOf(s(0, 1000), s(2_000, 1015), 22_000).anomaly).toBe('implausible_power');
  });

  it('register_too_slow needs power at both ends implying at least 100 Wh, and a register under 1 % of it', () => {
    expect(stepOf(p(0, 0, 11_000), p(1, 1, 11_000), 22_000).anomaly).toBe('register_too_slow'); // 183 Wh implied
    expect(stepOf(p(0, 0, 11_000), p(1, 2, 11_000), 22_000).anomaly).toBe(null); // 2 × 100 ≥ 183
    expect(stepOf(p(0, 0, 5_000), p(1, 0, 5_000), 22_000).anomaly).toBe(null); // 83 Wh implied: too little to judge
    expect(stepOf(p(0, 0, null), p(5, 0, 11_000), 22_000).anomaly).toBe(null); // power at one end only
    expect(stepOf(p(0, 0, 0), p(5, 0, 11_000), 22_000).anomaly).toBe(null); // the car was not charging at the start
  });

  it('held while any flagged step is undecided (its reasons only); else rejected if any was rejected, else accepted', () => {
    const pt = (min: number, wh: number, flag: string | null, review: 'accepted' | 'rejected' | null) => ({ ...p(min, wh), flag, anomaly: flag, review });
    const fold = (points: ReturnType<typeof pt>[]) => {
      const t = noTotals();
      foldSteps(t, null, points, 22_000);
      return t;
    };
    const a = pt(1, 100, 'future_timestamp', 'accepted');
    const r = pt(2, 200, 'implausible_power', 'rejected');
    const h = pt(3, 300, 'register_too_slow', null);
    // r and h are doubtful values here (their own flags): no step starts from r, so h's held step runs from a (D176)
    expect(fold([pt(0, 0, null, null), a, r, h])).toEqual({ energy: 100n, held: 200n, status: 'held', reasons: ['register_too_slow'] });
    expect(fold([pt(0, 0, null, null), a, r])).toEqual({ energy: 100n, held: 0n, status: 'rejected', reasons: ['future_timestamp', 'implausible_power'] });
    expect(fold([pt(0, 0, null, null), a])).toEqual({ energy: 100n, held: 0n, status: 'accepted', reasons: ['future_timestamp'] });
  });
});

describe.each([
  ['set-based (group commit)', {}],
  ['one message at a time', { INGEST_BATCH_MAX: '0' }],
])('an invalid signature (invalid_signature), %s', (_name, env) => {
  let own: TestService;
  let owner: { userId: string; token: string };
  beforeAll(async () => {
    own = await createTestService({ listen: true, env });
    owner = await aUser(own.deps);
  });
  afterAll(() => own.close());
  const ms = (min: number) => T0 + min * 60_000;
  /** one byte of the signed payload changed (the gateway identifier: the reading itself still matches) */
  const tamper = (ocmf: string) => ocmf.replace('"GI":"TEST GATEWAY"', '"GI":"TEST GATEWAX"');
  const held = async (chargerId: string) =>
    own.deps.db.selectFrom('charging_sessions').select(['energy_wh', 'held_wh', 'review_status', 'review_reason']).where('charger_id', '=', chargerId).executeTakeFirstOrThrow();

  it('2.0.1 signedMeterValue: the tampered reading holds the session and is no base; the steps count from the trusted readings (D176)', async () => {
    const meter = aMeter('secp256r1');
    const ch = await anOcppCharger(own, owner);
    const c = await connectCharger(own, ch, 'ocpp2.0.1');
    const base = { transactionInfo: { transactionId: `SIG-${ch.chargerId}` }, evse: { id: 1, connectorId: 1 } };
    try {
      const ev = (eventType: string, min: number, seqNo: number, wh: number, signed: object) =>
        c.call('TransactionEvent', {
          ...base, eventType, timestamp: at(min), triggerReason: 'MeterValuePeriodic', seqNo,
          meterValue: [{ timestamp: at(min), sampledValue: [{ value: wh, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' }, signedMeterValue: signed }] }],
        });
      await ev('Started', 0, 0, 10_000, signedMeterValue(signedReading(meter, ms(0), 10_000, 'B'), meter));
      await ev('Updated', 1, 1, 10_100, signedMeterValue(tamper(signedReading(meter, ms(1), 10_100)), meter));
      await ev('Updated', 2, 2, 10_250, signedMeterValue(signedReading(meter, ms(2), 10_250), meter));
      await ev('Ended', 3, 3, 10_400, signedMeterValue(signedReading(meter, ms(3), 10_400, 'E'), meter));
    } finally {
      await c.close();
    }
    // 10,000 → 10,250 → 10,400 from the trusted readings; the 100 Wh held for the tampered one are covered by them
    expect(await held(ch.chargerId)).toEqual({ energy_wh: '400', held_wh: '0', review_status: 'held', review_reason: 'invalid_signature' });
  });

  it('1.6 SignedData alone in StopTransaction (the JSON object with its key): placed on the stop reading after the energy update, it still holds the last step', async () => {
    const meter = aMeter('secp256r1');
    const ch = await anOcppCharger(own, owner);
    const c = await connectCharger(own, ch, 'ocpp1.6');
    try {
      const { transactionId } = (await c.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 30_000, timestamp: at(10) })) as { transactionId: number };
      await c.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(11), 30_100)] });
      await c.call('StopTransaction', {
        transactionId, meterStop: 30_400, timestamp: at(12),
        transactionData: [{ timestamp: at(12), sampledValue: [{ value: JSON.stringify(signedMeterValue(tamper(signedReading(meter, ms(12), 30_400, 'E')), meter)), format: 'SignedData', context: 'Transaction.End' }] }],
      });
    } finally {
      await c.close();
    }
    expect(await held(ch.chargerId)).toEqual({ energy_wh: '100', held_wh: '300', review_status: 'held', review_reason: 'invalid_signature' });
  });
});
