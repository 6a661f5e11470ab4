// D176: a reading whose own value is doubtful (a signature that fails verification) is no base for the next step.
// Driven as a charger does (OCPP 2.0.1 TransactionEvent with signedMeterValue; the charger's key registered through
// the admin API, a doubtful value signed with another key), on the set-based path and the one-message path, and read
// back as an owner reads it: GET /sessions (kwh, review) and GET /energy after the aggregation, before and after the
// operator's decision. Before D176 the doubtful value was the base of the next step: a lowered value counted the meter's
// next step twice, whatever the operator decided.
import type { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { anAccountWithConnection } from '../helpers/energy-factories.ts';
import { aMeter, signedMeterValue, signedReading, type TestMeter } from '../helpers/ocmf-signer.ts';
import { anOcppCharger, connectCharger, hourAgoTimeline } from '../helpers/ocpp-factories.ts';

const { T0, at } = hourAgoTimeline();
const admin = bearer(TEST_ADMIN_TOKEN);

interface Case {
  name: string;
  /** register values (Wh), 5 minutes apart (22 kW allow about 2,000 Wh a step); `true` marks one signed with a key that is not the charger's */
  readings: Array<[number, boolean?]>;
  /** kwh and held_kwh before a decision, and the session (kwh, review) after accepting and after rejecting */
  before: { kwh: number; held_kwh: number };
  accepted: { kwh: number; review: object };
  rejected: { kwh: number; review: object };
}

const ok = (status: 'accepted' | 'rejected') => ({ status, held_kwh: 0 });

const CASES: Case[] = [
  {
    // the audit's case: the meter moved 7,000 Wh; a lowered value with a bad signature made it 8,200 in every view, and
    // rejecting it changed nothing. Accepted, the operator vouches for the value: the step after it is then 4,800 Wh in
    // 5 minutes, implausible for 22 kW, and held.
    name: 'a lowered doubtful value in the middle',
    readings: [[1_000_000], [1_001_800], [1_000_600, true], [1_005_400], [1_007_000]],
    before: { kwh: 7, held_kwh: 0 },
    accepted: { kwh: 3.4, review: { status: 'held', reason: 'implausible_power', held_kwh: 4.8 } },
    rejected: { kwh: 7, review: ok('rejected') },
  },
  {
    name: 'a doubtful value on the way up',
    readings: [[10_000], [11_000, true], [12_000], [14_000]],
    before: { kwh: 4, held_kwh: 0 },
    accepted: { kwh: 4, review: ok('accepted') },
    rejected: { kwh: 4, review: ok('rejected') },
  },
  {
    name: 'a doubtful last value',
    readings: [[10_000], [11_000], [13_000, true]],
    before: { kwh: 1, held_kwh: 2 },
    accepted: { kwh: 3, review: ok('accepted') },
    rejected: { kwh: 1, review: ok('rejected') },
  },
  {
    // the step from a doubtful start counts only once the start is accepted; from the first trusted value on, counted
    name: 'a doubtful first value',
    readings: [[10_000, true], [11_000], [12_500]],
    before: { kwh: 1.5, held_kwh: 1 },
    accepted: { kwh: 2.5, review: ok('accepted') },
    rejected: { kwh: 1.5, review: ok('rejected') },
  },
  {
    // two doubtful values in a row: the steps count from the last trusted value; accepted, both are bases
    name: 'two doubtful values in a row',
    readings: [[10_000], [11_500, true], [10_500, true], [12_000], [13_000]],
    before: { kwh: 3, held_kwh: 0 },
    accepted: { kwh: 4, review: ok('accepted') },
    rejected: { kwh: 3, review: ok('rejected') },
  },
];

describe.each([
  ['set-based (group commit)', {}],
  ['one message at a time', { INGEST_BATCH_MAX: '0' }],
])('doubtful readings are no base, %s', (path, env) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService({ listen: true, env });
  });
  afterAll(() => svc.close());

  const runAggregation = async () => expect((await svc.app.inject({ method: 'POST', url: '/admin/jobs/energy-aggregate/run', headers: admin })).statusCode).toBe(200);
  const views = async (token: string) => {
    await runAggregation();
    const s = (await svc.app.inject({ method: 'GET', url: '/sessions', headers: bearer(token) })).json().sessions;
    const e = (await svc.app.inject({ method: 'GET', url: '/energy', headers: bearer(token) })).json();
    expect(s).toHaveLength(1);
    return { kwh: s[0].kwh, review: s[0].review, energy: e.total_kwh, sessionId: s[0].id as string };
  };

  async function charge(c: Case, decision?: 'accept' | 'reject') {
    const user = await aUser(svc.deps);
    const acc = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, eligible: true });
    const ch = await anOcppCharger(svc, user, { accountId: acc.accountId });
    const meter: TestMeter = aMeter('secp256r1');
    const other: TestMeter = aMeter('secp256r1');
    const put = await svc.app.inject({ method: 'PUT', url: `/admin/chargers/${ch.chargerId}/ocmf-public-key`, headers: admin, payload: { public_key: meter.publicKeyHex } });
    expect(put.statusCode).toBe(200);
    const cli: RPCClient = await connectCharger(svc, ch, 'ocpp2.0.1');
    const tx = `T-${Math.random()}`;
    try {
      for (const [i, [wh, doubtful]] of c.readings.entries()) {
        const ms = T0 + i * 5 * 60_000;
        const signer = doubtful ? other : meter;
        const eventType = i === 0 ? 'Started' : i === c.readings.length - 1 ? 'Ended' : 'Updated';
        const sv = { value: wh, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' }, signedMeterValue: signedMeterValue(signedReading(signer, ms, wh), signer) };
        await cli.call('TransactionEvent', {
          eventType,
          timestamp: at(i * 5),
          triggerReason: eventType === 'Ended' ? 'EVDeparted' : 'MeterValuePeriodic',
          seqNo: i,
          transactionInfo: { transactionId: tx, ...(eventType === 'Ended' ? { stoppedReason: 'EVDisconnected' } : {}) },
          ...(i === 0 ? { evse: { id: 1, connectorId: 1 } } : {}),
          meterValue: [{ timestamp: at(i * 5), sampledValue: [sv] }],
        });
      }
    } finally {
      await cli.close();
    }
    const before = await views(user.token);
    if (!decision) return before;
    const r = await svc.app.inject({ method: 'POST', url: `/admin/sessions/${before.sessionId}/review`, headers: admin, payload: { decision } });
    expect(r.statusCode).toBe(200);
    return views(user.token);
  }

  it.each(CASES)('$name', async (c) => {
    const before = await charge(c);
    expect(before).toMatchObject({ kwh: c.before.kwh, energy: c.before.kwh, review: { status: 'held', reason: 'invalid_signature', held_kwh: c.before.held_kwh } });
    // a decision recomputes the session from all its readings, whichever path wrote them: once is enough
    if (path !== 'set-based (group commit)') return;
    for (const decision of ['accept', 'reject'] as const) {
      const want = decision === 'accept' ? c.accepted : c.rejected;
      const after = await charge(c, decision);
      expect([decision, after.kwh, after.energy, after.review]).toEqual([decision, want.kwh, want.kwh, expect.objectContaining(want.review)]);
    }
  });
});
