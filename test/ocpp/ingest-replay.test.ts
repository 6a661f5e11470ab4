// C4.11: quarantined messages are listed and replayed by an operator after the cause is fixed (admin API and
// `npm run admin -- quarantine / replay-quarantine`); a replay is idempotent, and a replayed 1.6 StartTransaction
// keeps the transactionId the charger was given with its acknowledgement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli } from '../../src/cli/admin.ts';
import { allocateTransactionId } from '../../src/domain/charging/sessions.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline, type TestCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let user: { userId: string; token: string };
const { at } = hourAgoTimeline();

beforeAll(async () => {
  svc = await createTestService({ listen: true });
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

const auth = () => ({ authorization: `Bearer ${svc.config.ADMIN_TOKEN}` });
const list = async (ch: TestCharger) => (await svc.app.inject({ method: 'GET', url: `/admin/chargers/${ch.chargerId}/quarantine`, headers: auth() })).json().messages as Array<Record<string, unknown>>;
const replay = (ch: TestCharger, id: string) => svc.app.inject({ method: 'POST', url: `/admin/chargers/${ch.chargerId}/quarantine/${id}/replay`, headers: auth() });

/** The admin CLI against the running test service; returns the exit code and the printed JSON. */
async function cli(args: string[]): Promise<{ code: number; out: unknown }> {
  let out = '';
  const code = await runAdminCli(args, { ADMIN_TOKEN: svc.config.ADMIN_TOKEN, ADMIN_URL: svc.url }, { out: (t) => (out += t), err: (t) => (out += t) });
  return { code, out: code === 0 ? JSON.parse(out) : out };
}

describe('quarantine replay (C4.11)', () => {
  it('replays a signed-only MeterValues once its plain reading exists; a second replay changes nothing', async () => {
    const ch = await anOcppCharger(svc, user);
    const c = await connectCharger(svc, ch, 'ocpp1.6');
    const { transactionId } = (await c.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: at(0) })) as { transactionId: number };
    // the signature arrives before the reading it signs: nothing usable yet, acknowledged and quarantined whole
    await c.call('MeterValues', { connectorId: 1, transactionId, meterValue: [{ timestamp: at(5), sampledValue: [{ value: 'OCMF|sig5', format: 'SignedData' }] }] });
    const [q] = await list(ch);
    expect(q).toMatchObject({ kind: 'message', action: 'MeterValues', replayed_at: null, replay_result: null });
    expect(q!.reason).toMatch(/signed value without a plain register reading/);
    // replayed too early: recorded as still unusable, the row stays replayable
    const early = await replay(ch, q!.id as string);
    expect(early.statusCode).toBe(200);
    expect(early.json()).toMatchObject({ replay_result: 'unusable', replay_reason: expect.stringMatching(/signed value/) });
    // the cause is fixed: the plain reading at that time arrives
    await c.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(5), 500)] });
    await c.close();

    const first = await cli(['replay-quarantine', ch.chargerId, q!.id as string]);
    expect(first.code).toBe(0);
    expect(first.out).toMatchObject({ id: q!.id, replay_result: 'applied', replay_reason: null, replayed_at: expect.any(String) });
    const second = await cli(['replay-quarantine', ch.chargerId, q!.id as string]);
    expect(second.out).toEqual(first.out);
    const rows = await svc.deps.db.selectFrom('meter_readings').select(['wh', 'signed_data']).where('charger_id', '=', ch.chargerId).orderBy('measured_at').execute();
    expect(rows).toEqual([{ wh: '0', signed_data: null }, { wh: '500', signed_data: 'OCMF|sig5' }]);
    const listed = await cli(['quarantine', ch.chargerId]);
    expect((listed.out as { messages: unknown[] }).messages).toEqual([first.out]);
  });

  it('replays a StartTransaction quarantined by an earlier release under the transactionId it was acknowledged with, then its Stop', async () => {
    const ch = await anOcppCharger(svc, user);
    // an earlier release quarantined this valid Start during a database fault and acknowledged it with id N
    const n = Number(await allocateTransactionId(svc.deps.db));
    const startFrame = `[2,"m-1","StartTransaction",{"connectorId":1,"idTag":"TAG","meterStart":1000,"timestamp":"${at(0)}"}]`;
    const start = await svc.deps.db
      .insertInto('ocpp_quarantine')
      .values({ charger_id: ch.chargerId, protocol: 'ocpp1.6', action: 'StartTransaction', message_id: 'm-1', raw: startFrame, payload: null, reason: 'internal error', ack: JSON.stringify({ transactionId: n, idTagInfo: { status: 'Invalid' } }), received_at: new Date() })
      .returning('id')
      .executeTakeFirstOrThrow();
    // the charger stops transaction N: no session has it yet, so the live gateway quarantines the Stop
    const c = await connectCharger(svc, ch, 'ocpp1.6');
    expect(await c.call('StopTransaction', { transactionId: n, meterStop: 4000, timestamp: at(30) })).toEqual({});
    await c.close();
    const stop = (await list(ch)).find((m) => m.action === 'StopTransaction')!;
    expect(stop.raw).toContain(`"transactionId":${n}`);

    const a = await replay(ch, start.id);
    expect(a.json()).toMatchObject({ replay_result: 'applied' });
    const b = await replay(ch, stop.id as string);
    expect(b.json()).toMatchObject({ replay_result: 'applied' });
    for (const id of [start.id, stop.id as string]) expect((await replay(ch, id)).json().replay_result).toBe('applied');
    const sessions = await svc.deps.db.selectFrom('charging_sessions').selectAll().where('charger_id', '=', ch.chargerId).execute();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ transaction_id: String(n), status: 'completed', meter_start_wh: '1000', meter_stop_wh: '4000', energy_wh: '3000' });
  });

  it('answers 409 quarantine_not_replayable for a part set aside from an applied message', async () => {
    const ch = await anOcppCharger(svc, user);
    const c = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      const { transactionId } = (await c.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: at(0) })) as { transactionId: number };
      await c.call('MeterValues', { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(1), 100), { timestamp: at(2), sampledValue: [{ value: 'abc' }] }] });
    } finally {
      await c.close();
    }
    const [part] = await list(ch);
    expect(part).toMatchObject({ kind: 'part', action: 'MeterValues' });
    const res = await replay(ch, part!.id as string);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: 'quarantine_not_replayable', detail: expect.any(String) });
    expect((await list(ch))[0]).toMatchObject({ replayed_at: null });
  });

  it('answers 404 for an unknown row or charger', async () => {
    const ch = await anOcppCharger(svc, user);
    expect((await replay(ch, '999999999')).statusCode).toBe(404);
    expect((await replay(ch, 'not-a-number')).statusCode).toBe(404);
    const other = await svc.app.inject({ method: 'POST', url: '/admin/chargers/00000000-0000-4000-8000-000000000000/quarantine/1/replay', headers: auth() });
    expect(other.statusCode).toBe(404);
  });
});
