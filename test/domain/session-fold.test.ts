// The fold of a session's readings (readings.ts foldSteps/foldOrder), driven as the firmware audit drove it: raw OCPP
// 1.6 from a charger, read back as the owner reads it (GET /sessions kwh and review, GET /energy after the aggregation)
// before and after the operator's decision (POST /admin/sessions/:id/review).
// - D258: a run of doubtful readings (a clock 10 minutes ahead) held each one's whole step from the same base again:
//   0.9 kWh metered showed held_kwh 4.5, and 0.4 metered held 0.6 that no decision could release.
// - D259: two registers for the same instant (meterStop and a transactionData Transaction.End) that disagree: the
//   higher one counted for good (600 Wh for a meterStop 400 above the start) with only a backwards step flagged, nothing held.
// - D260: a reading stamped before its session's start (a clock that fell back) became the session's first point and
//   turned Transaction.Begin into register_backwards: 0.1 kWh shown for 0.3 metered, nothing held.
import type { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { anAccountWithConnection } from '../helpers/energy-factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline, isoSeconds } from '../helpers/ocpp-factories.ts';

const { T0, at } = hourAgoTimeline();
const admin = bearer(TEST_ADMIN_TOKEN);

/** A 1.6 transaction as the charger sends it: the start, MeterValues naming it, and (when given) the stop. */
interface Sequence {
  start: { wh: number; at: string };
  values: Array<{ wh: number; at: string }>;
  stop?: { wh: number; at: string; transactionData?: Array<{ wh: number; at: string }> };
}

interface Expected {
  kwh: number;
  review: { status: string; reason?: string; held_kwh: number } | null;
}

interface Case {
  name: string;
  seq: () => Sequence;
  before: Expected;
  /** the register values whose reading carries an anomaly before the decision, with it */
  flagged?: Array<[string, string]>;
  accepted: Expected;
  rejected: Expected;
}

/** 10 minutes ahead of the gateway's clock (future_timestamp), `s` seconds after the first. */
const ahead = (s: number) => isoSeconds(Math.floor(Date.now() / 1000) * 1000 + 10 * 60_000 + s * 1000);

const CASES: Case[] = [
  {
    // the audit's groupH: every reading stamped ~10 min ahead, 8 MeterValues 20 s apart, each +100 Wh
    name: 'D258: a clock 10 minutes ahead, nine doubtful readings in a row',
    seq: () => ({
      start: { wh: 1_000_000, at: ahead(0) },
      values: Array.from({ length: 8 }, (_, i) => ({ wh: 1_000_000 + (i + 1) * 100, at: ahead((i + 1) * 20) })),
      stop: { wh: 1_000_900, at: ahead(180) },
    }),
    before: { kwh: 0, review: { status: 'held', reason: 'future_timestamp', held_kwh: 0.9 } },
    accepted: { kwh: 0.9, review: { status: 'accepted', held_kwh: 0 } },
    rejected: { kwh: 0, review: { status: 'rejected', held_kwh: 0 } },
  },
  {
    // the audit's D-noZlocal on the scale of one MeterValues: 400 Wh metered held 600
    name: 'D258: three doubtful readings, 400 Wh metered',
    seq: () => ({ start: { wh: 1_000_000, at: ahead(0) }, values: [{ wh: 1_000_200, at: ahead(120) }], stop: { wh: 1_000_400, at: ahead(240) } }),
    before: { kwh: 0, review: { status: 'held', reason: 'future_timestamp', held_kwh: 0.4 } },
    accepted: { kwh: 0.4, review: { status: 'accepted', held_kwh: 0 } },
    rejected: { kwh: 0, review: { status: 'rejected', held_kwh: 0 } },
  },
  {
    // trusted readings first, then the clock jumps ahead: what the doubtful ones add above the last trusted value
    name: 'D258: doubtful readings after trusted ones',
    seq: () => ({
      start: { wh: 50_000, at: at(0) },
      values: [{ wh: 50_300, at: at(5) }, { wh: 50_400, at: ahead(0) }, { wh: 50_500, at: ahead(20) }, { wh: 50_600, at: ahead(40) }],
    }),
    before: { kwh: 0.3, review: { status: 'held', reason: 'future_timestamp', held_kwh: 0.3 } },
    accepted: { kwh: 0.6, review: { status: 'accepted', held_kwh: 0 } },
    rejected: { kwh: 0.3, review: { status: 'rejected', held_kwh: 0 } },
  },
  {
    // the audit's C-txDataDiffers: meterStop 1,000,400 and Transaction.End 1,000,600 at the stop's time
    name: 'D259: two registers for the stop instant disagree',
    seq: () => ({
      start: { wh: 1_000_000, at: at(0) },
      values: [{ wh: 1_000_200, at: at(2) }],
      stop: { wh: 1_000_400, at: at(4), transactionData: [{ wh: 1_000_600, at: at(4) }] },
    }),
    // D268: the instant's value is the one that continues the register; the other is a doubtful value of its own
    before: { kwh: 0.4, review: { status: 'held', reason: 'register_conflict', held_kwh: 0.2 } },
    flagged: [['1000600', 'register_conflict']],
    accepted: { kwh: 0.6, review: { status: 'accepted', held_kwh: 0 } },
    rejected: { kwh: 0.4, review: { status: 'rejected', held_kwh: 0 } },
  },
  {
    // D268 (a check audit of D259): a meterStop of 0 ("not known") beside the real register in transactionData at the
    // same instant; folded lower first, the 0 was the base of a 1,000,400 Wh jump (1,000.4 kWh held, accepted as
    // counted). Now the register's value is the instant's and the 0 a conflict holding nothing.
    name: 'D268: a meterStop of 0 beside the register at the stop instant',
    seq: () => ({
      start: { wh: 1_000_000, at: at(0) },
      values: [{ wh: 1_000_200, at: at(2) }],
      stop: { wh: 0, at: at(4), transactionData: [{ wh: 1_000_400, at: at(4) }] },
    }),
    before: { kwh: 0.4, review: { status: 'held', reason: 'register_conflict', held_kwh: 0 } },
    flagged: [['0', 'register_conflict']],
    accepted: { kwh: 0.4, review: { status: 'accepted', held_kwh: 0 } },
    rejected: { kwh: 0.4, review: { status: 'rejected', held_kwh: 0 } },
  },
  {
    // the audit's I-clockReset with a usable time: after a power loss the clock reads 3 hours before the start. A value
    // sampled a minute before the start event that is not above the start register stays a point, unflagged.
    name: 'D260: a reading stamped before the session started',
    seq: () => ({
      start: { wh: 1_000_000, at: at(0) },
      values: [{ wh: 1_000_000, at: at(-1) }, { wh: 1_000_100, at: at(1) }, { wh: 1_000_300, at: at(-180) }],
    }),
    before: { kwh: 0.1, review: { status: 'held', reason: 'before_session_start', held_kwh: 0.2 } },
    flagged: [['1000300', 'before_session_start']],
    accepted: { kwh: 0.3, review: { status: 'accepted', held_kwh: 0 } },
    rejected: { kwh: 0.1, review: { status: 'rejected', held_kwh: 0 } },
  },
  {
    // the clock is right again afterwards: the readings after it cover what it showed, nothing counts twice
    name: 'D260: a reading before the start, then the clock is right again',
    seq: () => ({
      start: { wh: 1_000_000, at: at(0) },
      values: [{ wh: 1_000_100, at: at(1) }, { wh: 1_000_300, at: at(-180) }, { wh: 1_000_500, at: at(5) }],
      stop: { wh: 1_000_600, at: at(6) },
    }),
    before: { kwh: 0.6, review: { status: 'held', reason: 'before_session_start', held_kwh: 0 } },
    accepted: { kwh: 0.6, review: { status: 'accepted', held_kwh: 0 } },
    rejected: { kwh: 0.6, review: { status: 'rejected', held_kwh: 0 } },
  },
];

const register = (wh: number, context: string) => ({ value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh', context });

describe.each([
  ['set-based (group commit)', {}],
  ['one message at a time', { INGEST_BATCH_MAX: '0' }],
])('the fold of a session, %s', (path, env) => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService({ listen: true, env });
  });
  afterAll(() => svc.close());

  const views = async (token: string) => {
    expect((await svc.app.inject({ method: 'POST', url: '/admin/jobs/energy-aggregate/run', headers: admin })).statusCode).toBe(200);
    const s = (await svc.app.inject({ method: 'GET', url: '/sessions', headers: bearer(token) })).json().sessions;
    const e = (await svc.app.inject({ method: 'GET', url: '/energy', headers: bearer(token) })).json();
    expect(s).toHaveLength(1);
    return { kwh: s[0].kwh as number, review: s[0].review, energy: e.total_kwh as number, sessionId: s[0].id as string };
  };

  async function charge(c: Case, decision?: 'accept' | 'reject') {
    const user = await aUser(svc.deps);
    const acc = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, eligible: true });
    const ch = await anOcppCharger(svc, user, { accountId: acc.accountId });
    const cli: RPCClient = await connectCharger(svc, ch, 'ocpp1.6');
    const seq = c.seq();
    try {
      const started = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: seq.start.wh, timestamp: seq.start.at })) as { transactionId: number };
      const transactionId = started.transactionId;
      for (const v of seq.values) await cli.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', v.at, v.wh)] });
      if (seq.stop) {
        const td = seq.stop.transactionData?.map((v) => ({ timestamp: v.at, sampledValue: [register(v.wh, 'Transaction.End')] }));
        await cli.call('StopTransaction', { transactionId, meterStop: seq.stop.wh, timestamp: seq.stop.at, idTag: 'TAG', ...(td ? { transactionData: td } : {}) });
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

  const shown = (e: Expected) => (e.review === null ? null : expect.objectContaining(e.review));

  it.each(CASES)('$name', async (c) => {
    const before = await charge(c);
    // the owner's session and the months agree, and held_kwh is what an accept adds
    expect([before.kwh, before.energy, before.review]).toEqual([c.before.kwh, c.before.kwh, shown(c.before)]);
    if (c.flagged) {
      const rows = await svc.deps.db.selectFrom('meter_readings').select(['wh', 'anomaly']).where('session_id', '=', before.sessionId).where('anomaly', 'is not', null).orderBy('wh').execute();
      expect(rows.map((r) => [r.wh, r.anomaly])).toEqual(c.flagged);
    }
    expect(c.accepted.kwh).toBe(Math.round((c.before.kwh + (c.before.review?.held_kwh ?? 0)) * 1000) / 1000);
    // a decision recomputes the session from all its readings, whichever path wrote them: once is enough
    if (path !== 'set-based (group commit)' || c.before.review === null) return;
    for (const decision of ['accept', 'reject'] as const) {
      const want = decision === 'accept' ? c.accepted : c.rejected;
      const after = await charge(c, decision);
      expect([decision, after.kwh, after.energy, after.review]).toEqual([decision, want.kwh, want.kwh, shown(want)]);
    }
  });
});
