// D215: the sessions stored before D176 with a doubtful reading are recomputed once after the upgrade. The situation
// before the upgrade is made on a real database: sessions charged through OCPP 2.0.1 (a value signed with a key that
// is not the charger's, as test/ocpp/doubtful-readings.test.ts does), then their stored energy overwritten with what
// the old rule made of the same readings, their stamps set to an hour ago and the month to what the aggregation had
// written then, and the backfill's row removed (the state before migration 0081). The backfill then runs as a
// starting process runs it (the scheduler, at start) and is read back as the owner reads it (GET /sessions, GET
// /energy after the next aggregation run). On the code before there was no backfill: the sessions kept 8.2 and 6.6 kWh.
import { Writable } from 'node:stream';
import pino from 'pino';
import { sql } from 'kysely';
import type { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findJob } from '../../src/jobs/registry.ts';
import { startScheduler } from '../../src/jobs/scheduler.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { anAccountWithConnection } from '../helpers/energy-factories.ts';
import { aMeter, signedMeterValue, signedReading } from '../helpers/ocmf-signer.ts';
import { anOcppCharger, connectCharger } from '../helpers/ocpp-factories.ts';

const admin = bearer(TEST_ADMIN_TOKEN);
// readings 20 minutes apart, the first two hours ago (22 kW allow about 8 kWh a step)
const T0 = Math.floor(Date.now() / 1000) * 1000 - 2 * 3_600_000;
const isoAt = (i: number) => new Date(T0 + i * 20 * 60_000).toISOString().replace(/\.\d{3}Z$/, 'Z');

const logLines: Array<Record<string, unknown>> = [];
const logStream = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString().split('\n')) if (line) logLines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

interface Charged {
  token: string;
  sessionId: string;
  connectionId: string;
  send: (i: number, wh: number, eventType: 'Updated' | 'Ended') => Promise<void>;
  close: () => Promise<unknown>;
}

describe('doubtful-backfill (D215)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService({ listen: true, logger: pino({ level: 'info' }, logStream) });
  });
  afterAll(() => svc.close());

  const sessionsOf = async (token: string) => (await svc.app.inject({ method: 'GET', url: '/sessions', headers: bearer(token) })).json().sessions;
  const energyOf = async (token: string) => (await svc.app.inject({ method: 'GET', url: '/energy', headers: bearer(token) })).json().total_kwh as number;
  const runJob = async (name: string) => {
    const r = await svc.app.inject({ method: 'POST', url: `/admin/jobs/${name}/run`, headers: admin });
    expect(r.statusCode, r.body).toBe(200);
    return r.json().result;
  };
  const stamps = async (id: string) =>
    svc.deps.db.selectFrom('charging_sessions').select(['energy_wh', 'updated_at', 'metered_at']).where('id', '=', id).executeTakeFirstOrThrow();

  /** A session charged as a charger sends it: register values (Wh) 20 minutes apart, `true` signed with another key. */
  async function charge(readings: Array<[number, boolean?]>, end: boolean): Promise<Charged> {
    const user = await aUser(svc.deps);
    const acc = await anAccountWithConnection(svc.deps, { ownerUserId: user.userId, eligible: true });
    const ch = await anOcppCharger(svc, user, { accountId: acc.accountId });
    const meter = aMeter('secp256r1');
    const other = aMeter('secp256r1');
    const put = await svc.app.inject({ method: 'PUT', url: `/admin/chargers/${ch.chargerId}/ocmf-public-key`, headers: admin, payload: { public_key: meter.publicKeyHex } });
    expect(put.statusCode).toBe(200);
    const cli: RPCClient = await connectCharger(svc, ch, 'ocpp2.0.1');
    const tx = `T-${Math.random()}`;
    const event = async (i: number, wh: number, eventType: 'Started' | 'Updated' | 'Ended', doubtful = false) => {
      const signer = doubtful ? other : meter;
      const sv = { value: wh, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' }, signedMeterValue: signedMeterValue(signedReading(signer, T0 + i * 20 * 60_000, wh), signer) };
      await cli.call('TransactionEvent', {
        eventType,
        timestamp: isoAt(i),
        triggerReason: eventType === 'Ended' ? 'EVDeparted' : 'MeterValuePeriodic',
        seqNo: i,
        transactionInfo: { transactionId: tx, ...(eventType === 'Ended' ? { stoppedReason: 'EVDisconnected' } : {}) },
        ...(i === 0 ? { evse: { id: 1, connectorId: 1 } } : {}),
        meterValue: [{ timestamp: isoAt(i), sampledValue: [sv] }],
      });
    };
    for (const [i, [wh, doubtful]] of readings.entries()) {
      await event(i, wh, i === 0 ? 'Started' : end && i === readings.length - 1 ? 'Ended' : 'Updated', doubtful);
    }
    const sessions = await sessionsOf(user.token);
    expect(sessions).toHaveLength(1);
    return { token: user.token, sessionId: sessions[0].id, connectionId: acc.connectionId, send: (i, wh, t) => event(i, wh, t), close: () => cli.close() };
  }

  /** The session as stored before the upgrade: the old rule's energy, last written an hour ago. */
  async function storedBeforeUpgrade(sessionId: string, oldEnergyWh?: number): Promise<void> {
    await svc.deps.db
      .updateTable('charging_sessions')
      .set({
        ...(oldEnergyWh !== undefined ? { energy_wh: String(oldEnergyWh) } : {}),
        updated_at: sql`now() - interval '1 hour'`,
        metered_at: sql`now() - interval '1 hour'`,
      })
      .where('id', '=', sessionId)
      .execute();
  }

  it('recomputes the sessions with a doubtful reading once, completed and running, and leaves the others', async () => {
    // the decision's example: the meter moved 7,000 Wh; under the old rule the lowered, doubtful third value was the
    // base of the next step (4,800 Wh where the meter moved 3,600) and the session was stored with 8,200 Wh
    const completed = await charge([[1_000_000], [1_001_800], [1_000_600, true], [1_005_400], [1_007_000]], true);
    // still charging at the upgrade: 1,800 + 4,800 under the old rule, 1,800 + 3,600 under D176
    const running = await charge([[1_000_000], [1_001_800], [1_000_600, true], [1_005_400]], false);
    // no doubtful reading: nothing to change
    const plain = await charge([[10_000], [12_000], [14_000]], true);
    try {
      // the months as the aggregation wrote them before the upgrade (the old rule's 8.2 kWh), and no run since
      expect(await runJob('energy-aggregate')).toMatchObject({ mode: 'full' });
      const month = await svc.deps.db
        .selectFrom('energy_months')
        .select('id')
        .where('connection_id', '=', completed.connectionId)
        .orderBy('month', 'desc')
        .executeTakeFirstOrThrow();
      await svc.deps.db.updateTable('energy_months').set({ wh: sql`wh + 1200`, kwh: sql`kwh + 1.2` }).where('id', '=', month.id).execute();
      await sql`update energy_aggregate_watermark set since = now()`.execute(svc.deps.db);
      await storedBeforeUpgrade(completed.sessionId, 8_200);
      await storedBeforeUpgrade(running.sessionId, 6_600);
      await storedBeforeUpgrade(plain.sessionId);
      await svc.deps.db.deleteFrom('backfills').where('name', '=', 'doubtful-backfill').execute();

      const heldReview = { status: 'held', reason: 'invalid_signature', held_kwh: 0 };
      expect((await sessionsOf(completed.token))[0]).toMatchObject({ kwh: 8.2, review: heldReview });
      expect((await sessionsOf(running.token))[0]).toMatchObject({ kwh: 6.6 });
      expect(await energyOf(completed.token)).toBe(8.2);
      const plainBefore = await stamps(plain.sessionId);

      // a process starts after the upgrade: its scheduler runs the backfill in the background; stopping the scheduler
      // waits for that run
      const job = findJob('doubtful-backfill');
      expect(job?.atStart).toBe(true);
      await startScheduler(svc.deps, [job!]).stop();

      expect((await sessionsOf(completed.token))[0]).toMatchObject({ kwh: 7, review: heldReview });
      expect((await sessionsOf(running.token))[0]).toMatchObject({ kwh: 5.4 });
      // the session without a doubtful reading was not written (a recompute stamps updated_at)
      expect(await stamps(plain.sessionId)).toEqual(plainBefore);
      expect((await sessionsOf(plain.token))[0]).toMatchObject({ kwh: 4, review: null });

      // the recompute marks the session's months, so the next aggregation run brings the month to the same 7 kWh
      expect(await runJob('energy-aggregate')).toMatchObject({ mode: 'incremental' });
      expect(await energyOf(completed.token)).toBe(7);

      // done, and said so: the row, the run's record and the log
      const done = { status: 'done', sessions_checked: 2, sessions_changed: 2 };
      const marker = await svc.deps.db.selectFrom('backfills').selectAll().where('name', '=', 'doubtful-backfill').executeTakeFirstOrThrow();
      expect(marker.result).toMatchObject(done);
      const jobs = (await svc.app.inject({ method: 'GET', url: '/admin/jobs', headers: admin })).json().jobs;
      expect(jobs.find((j: { name: string }) => j.name === 'doubtful-backfill')).toMatchObject({ cron: null, last_run: { trigger: 'schedule', outcome: 'ok', result: done } });
      expect(logLines.find((l) => l.event === 'job.finished' && l.job === 'doubtful-backfill')).toMatchObject({ result: done });
      const changedLines = logLines.filter((l) => l.event === 'backfill.session_changed');
      expect(changedLines.map((l) => [l.session_id, l.energy_wh_before, l.energy_wh_after]).sort()).toEqual(
        [
          [completed.sessionId, '8200', '7000'],
          [running.sessionId, '6600', '5400'],
        ].sort(),
      );

      // a second run, by hand or by the next start, does nothing
      const completedAfter = await stamps(completed.sessionId);
      expect(await runJob('doubtful-backfill')).toEqual({ status: 'done_earlier', done_at: new Date(marker.done_at).toISOString().replace(/\.\d{3}Z$/, 'Z') });
      await startScheduler(svc.deps, [job!]).stop();
      expect(await stamps(completed.sessionId)).toEqual(completedAfter);
      expect(await stamps(plain.sessionId)).toEqual(plainBefore);

      // the running session goes on from what the backfill wrote: the meter's next 1,600 Wh count
      await running.send(4, 1_007_000, 'Ended');
      expect((await sessionsOf(running.token))[0]).toMatchObject({ kwh: 7, review: heldReview });
    } finally {
      await Promise.all([completed.close(), running.close(), plain.close()]);
    }
  });

  it('a database without sessions at the upgrade is done from the start (migration 0081)', async () => {
    const other = await createTestService();
    try {
      expect(await other.deps.db.selectFrom('backfills').select('name').execute()).toEqual([{ name: 'doubtful-backfill' }]);
      const r = await other.app.inject({ method: 'POST', url: '/admin/jobs/doubtful-backfill/run', headers: admin });
      expect(r.json().result).toMatchObject({ status: 'done_earlier' });
    } finally {
      await other.close();
    }
  });
});
