// C4.11 database-fault test: a TCP proxy of the test's own sits between the service and PostgreSQL and is cut
// (every proxied socket destroyed, new ones dropped at once) and restored. During the cut a transaction message
// gets CALLERROR InternalError with a generic text, /readyz answers 503 and nothing is quarantined; after it the
// charger's retries are stored exactly once. PGlite is embedded (no connection to cut): PostgreSQL only. Then an
// error of the database's own state raised by the database (both engines).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { RPCClient } from 'ocpp-rpc';
import { createTestService, type TestService } from '../helpers/app.ts';
import { proxiedDatabase } from '../helpers/db-proxy.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline } from '../helpers/ocpp-factories.ts';

const SQL_OR_STACK = /select|insert|update|violat|constraint|postgres|relation|terminated|ECONN|\bat \w+ \(|\.ts:\d+/i;

// PGlite runs inside the test process: there is no connection between service and database to cut.
describe.skipIf(!process.env.DATABASE_URL)('database fault between the service and PostgreSQL (C4.11)', () => {
  let db: Awaited<ReturnType<typeof proxiedDatabase>>;
  let svc: TestService;

  beforeAll(async () => {
    db = await proxiedDatabase(5);
    svc = await createTestService({ listen: true, db: db.viaProxy });
  });
  afterAll(async () => {
    await svc?.close();
    await db?.close();
  });

  it('refuses with InternalError during the cut, quarantines nothing, and stores the retries once after it', async () => {
    const { at } = hourAgoTimeline();
    const user = await aUser(svc.deps);
    const ch = await anOcppCharger(svc, user);
    const cli: RPCClient = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: at(0) })) as { transactionId: number };
      const mv = { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(1), 300)] };
      const stop = { transactionId, meterStop: 900, timestamp: at(5) };

      db.proxy.cut();
      for (const [action, payload] of [['MeterValues', mv], ['StopTransaction', stop]] as const) {
        const err = await cli.call(action, payload).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toMatchObject({ rpcErrorCode: 'InternalError' });
        expect((err as Error).message).not.toMatch(SQL_OR_STACK);
      }
      expect((await fetch(`${svc.url}/readyz`)).status).toBe(503);
      const quarantined = await db.direct.db.selectFrom('ocpp_quarantine').select('id').where('charger_id', '=', ch.chargerId).execute();
      expect(quarantined).toEqual([]);

      db.proxy.restore();
      // the charger retries its transaction messages (twice here, as after a lost acknowledgement)
      for (let i = 0; i < 2; i++) {
        expect(await cli.call('MeterValues', mv)).toEqual({});
        expect(await cli.call('StopTransaction', stop)).toEqual({});
      }
      expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
    } finally {
      await cli.close();
    }
    const rows = await db.direct.db.selectFrom('meter_readings').select(['wh', 'context']).where('charger_id', '=', ch.chargerId).orderBy('measured_at').execute();
    expect(rows.map((r) => r.wh)).toEqual(['0', '300', '900']);
    const sessions = await db.direct.db.selectFrom('charging_sessions').selectAll().where('charger_id', '=', ch.chargerId).execute();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ status: 'completed', energy_wh: '900', meter_stop_wh: '900' });
    expect(await db.direct.db.selectFrom('ocpp_quarantine').select('id').where('charger_id', '=', ch.chargerId).execute()).toEqual([]);
  });
});

// D104: an error of the database's own state, whatever its SQLSTATE, is not the message's fault. Raised here by the
// database itself (a trigger on the readings) so that the quarantine, another table, can still be written: as when
// a database stops taking new connections while some pooled ones still work (SQLSTATE 55000), where the message
// was acknowledged and quarantined as a bug.
describe("a database error of another class than the data's (D104)", () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService({ listen: true });
  });
  afterAll(async () => {
    await svc?.close();
  });

  it("refuses the message with InternalError and quarantines nothing; the charger's retry is stored once the fault is gone", async () => {
    const { at } = hourAgoTimeline();
    const user = await aUser(svc.deps);
    const ch = await anOcppCharger(svc, user);
    const cli: RPCClient = await connectCharger(svc, ch, 'ocpp1.6');
    const db = svc.deps.db;
    try {
      const { transactionId } = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: at(0) })) as { transactionId: number };
      const mv = { connectorId: 1, transactionId, meterValue: [energyValue('ocpp1.6', at(1), 300)] };
      const stop = { transactionId, meterStop: 900, timestamp: at(5) };
      await sql`create function refuse_reading() returns trigger language plpgsql as $$ begin
        raise exception 'database is not currently accepting connections' using errcode = '55000'; end $$`.execute(db);
      await sql`create trigger refuse_reading before insert on meter_readings for each row execute function refuse_reading()`.execute(db);
      for (const [action, payload] of [['MeterValues', mv], ['StopTransaction', stop]] as const) {
        const err = await cli.call(action, payload).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toMatchObject({ rpcErrorCode: 'InternalError' });
      }
      expect(await db.selectFrom('ocpp_quarantine').select('id').where('charger_id', '=', ch.chargerId).execute()).toEqual([]);
      await sql`drop trigger refuse_reading on meter_readings`.execute(db);
      // the charger sends them again, as it does for a message it got no answer to
      expect(await cli.call('MeterValues', mv)).toEqual({});
      expect(await cli.call('StopTransaction', stop)).toEqual({});
    } finally {
      await sql`drop trigger if exists refuse_reading on meter_readings`.execute(db);
      await cli.close();
    }
    const rows = await db.selectFrom('meter_readings').select('wh').where('charger_id', '=', ch.chargerId).orderBy('measured_at').execute();
    expect(rows.map((r) => r.wh)).toEqual(['0', '300', '900']);
    const session = await db.selectFrom('charging_sessions').selectAll().where('charger_id', '=', ch.chargerId).executeTakeFirstOrThrow();
    expect(session).toMatchObject({ status: 'completed', energy_wh: '900' });
  });
});
