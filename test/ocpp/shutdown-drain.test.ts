// D120: a process that stops (SIGTERM → service.stop()) answers the messages its sockets have already read before it
// closes them with 1001 (going away), so a charger is not left waiting for an answer to a message that was committed.
// A long group-commit window keeps the reading in flight when the stop begins.
import { afterAll, describe, expect, it } from 'vitest';
import { createTestService } from '../helpers/app.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline } from '../helpers/ocpp-factories.ts';

describe('stopping with messages in flight', () => {
  let db: TestDb;
  afterAll(async () => {
    await db?.close();
  });

  it('answers what each socket has read, stores it, then closes the socket with 1001', { timeout: 30_000 }, async () => {
    db = await createTestDb();
    const svc = await createTestService({ listen: true, db, env: { INGEST_FLUSH_MS: '1500' } });
    const user = await aUser(svc.deps);
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    const closed = new Promise<{ code: number; reason: string }>((r) => cli.once('close', (e: { code: number; reason: string }) => r(e)));
    const { at } = hourAgoTimeline();
    const start = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG-1', meterStart: 1000, timestamp: at(0) })) as {
      transactionId: number;
    };
    // the reading waits in the 1.5 s window when the stop begins
    const reading = cli.call('MeterValues', { connectorId: 1, transactionId: start.transactionId, meterValue: [energyValue('ocpp1.6', at(10), 2500)] });
    await new Promise((r) => setTimeout(r, 300));
    const stopping = svc.close();

    await expect(reading).resolves.toEqual({});
    const close = await closed;
    expect(close.code).toBe(1001);
    await stopping;

    const stored = await db.db.selectFrom('meter_readings').select(['wh']).where('charger_id', '=', ch.chargerId).orderBy('measured_at').execute();
    expect(stored.map((r) => Number(r.wh))).toEqual([1000, 2500]);
  });
});
