// D156: a charger's quarantine has a budget in bytes per rolling day, counted in PostgreSQL. Past it an unusable
// message is refused with InternalError (not acknowledged, nothing kept), logged once and counted; a well-formed
// reading is never refused for it. A large frame is kept once (raw), not twice (raw and jsonb).
import { randomBytes } from 'node:crypto';
import type { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, type TestCharger } from '../helpers/ocpp-factories.ts';
import { logSink } from '../helpers/raw-upgrade.ts';

const BUDGET = 200_000;
const clock = testClock(new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 + 600_000));
const log = logSink();
let a: TestService;
let b: TestService;
let user: { userId: string };

beforeAll(async () => {
  const env = { OCPP_QUARANTINE_BYTES_PER_DAY: String(BUDGET) };
  a = await createTestService({ listen: true, clock, env, logger: createLogger({ level: 'info', destination: log.sink }) });
  // a second process on the same database: the budget is the charger's, whichever process holds its socket
  b = await createTestService({ listen: true, clock, env, db: a.testDb });
  user = await aUser(a.deps);
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

/** The audit's message: a reading of an unknown transaction whose value is a number followed by ~60 KB of noise. */
const unusable = (n: number) => ({
  connectorId: 1,
  transactionId: 999999,
  meterValue: [{ timestamp: clock().toISOString(), sampledValue: [{ value: `${n}${randomBytes(45_000).toString('base64')}` }] }],
});

const quarantined = (ch: TestCharger) =>
  a.deps.db.selectFrom('ocpp_quarantine').select(['raw', 'payload']).where('charger_id', '=', ch.chargerId).where('kind', '=', 'message').execute();

async function answerOf(cli: RPCClient, action: string, payload: unknown): Promise<unknown> {
  try {
    return await cli.call(action, payload);
  } catch (err) {
    const e = err as { rpcErrorCode?: string; message?: string };
    return { error: e.rpcErrorCode, text: e.message };
  }
}

describe('the quarantine budget per charger (D156)', () => {
  it('keeps unusable messages up to the budget, then refuses them unkept; readings still go in', async () => {
    const ch = await anOcppCharger(a, user);
    const cli = await connectCharger(a, ch, 'ocpp1.6');
    const answers = [];
    for (let i = 0; i < 7; i++) answers.push(await answerOf(cli, 'MeterValues', unusable(i)));
    // 4 × 60 KB fit under 200,000 bytes (the last one admitted goes past it), the rest are refused with a clear text
    const refusal = { error: 'InternalError', text: expect.stringContaining('quarantine budget') };
    expect(answers).toEqual([{}, {}, {}, {}, refusal, refusal, refusal]);
    const rows = await quarantined(ch);
    expect(rows).toHaveLength(4); // before: 7, each also kept a second time as jsonb
    for (const r of rows) expect(r.payload).toBeNull();
    expect(rows.every((r) => (r.raw ?? '').length > 60_000)).toBe(true);

    // a well-formed reading is not quarantined, so the budget never refuses it
    expect(await cli.call('MeterValues', { connectorId: 1, meterValue: [energyValue('ocpp1.6', clock().toISOString(), 1234)] })).toEqual({});
    const readings = await a.deps.db.selectFrom('meter_readings').select('wh').where('charger_id', '=', ch.chargerId).execute();
    expect(readings.map((r) => Number(r.wh))).toEqual([1234]);
    await cli.close();

    // the same charger on another process: still refused (the count is in PostgreSQL)
    const other = await connectCharger(b, ch, 'ocpp1.6');
    expect(await answerOf(other, 'MeterValues', unusable(8))).toEqual(refusal);
    expect(await quarantined(ch)).toHaveLength(4);

    // logged once for the charger (not once per refusal), and counted
    expect(log.lines.filter((l) => l.event === 'ocpp.quarantine_full' && l.chargerId === ch.chargerId)).toHaveLength(1);
    expect(await a.deps.metrics.getSingleMetricAsString('ocpp_quarantine_refused_total')).toMatch(/action="MeterValues"} 3/);

    // another charger has its own budget; and a day later this one's window is free again
    const fresh = await anOcppCharger(a, user);
    const freshCli = await connectCharger(a, fresh, 'ocpp1.6');
    expect(await answerOf(freshCli, 'MeterValues', unusable(9))).toEqual({});
    await freshCli.close();
    clock.advance(24 * 3_600_000);
    expect(await answerOf(other, 'MeterValues', unusable(10))).toEqual({});
    expect(await quarantined(ch)).toHaveLength(5);
    await other.close();
  });

  it('a small unusable frame still keeps its structured copy beside the raw text', async () => {
    const ch = await anOcppCharger(a, user);
    const cli = await connectCharger(a, ch, 'ocpp1.6');
    const small = { connectorId: 1, transactionId: 999999, meterValue: [{ timestamp: clock().toISOString(), sampledValue: [{ value: 'not a number' }] }] };
    expect(await cli.call('MeterValues', small)).toEqual({});
    const rows = await quarantined(ch);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.payload).toEqual(small);
    await cli.close();
  });
});
