// C4.11 database-fault test: a TCP proxy of the test's own sits between the service and PostgreSQL and is cut
// (every proxied socket destroyed, new ones dropped at once) and restored. During the cut a transaction message
// gets CALLERROR InternalError with a generic text, /readyz answers 503 and nothing is quarantined; after it the
// charger's retries are stored exactly once. PGlite is embedded (no connection to cut): PostgreSQL only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RPCClient } from 'ocpp-rpc';
import { createDb, type DbHandle } from '../../src/db/database.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { createTestDb, type TestDb } from '../helpers/db.ts';
import { dbProxy } from '../helpers/db-proxy.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline } from '../helpers/ocpp-factories.ts';

const SQL_OR_STACK = /select|insert|update|violat|constraint|postgres|relation|terminated|ECONN|\bat \w+ \(|\.ts:\d+/i;

// PGlite runs inside the test process: there is no connection between service and database to cut.
describe.skipIf(!process.env.DATABASE_URL)('database fault between the service and PostgreSQL (C4.11)', () => {
  let direct: TestDb;
  let proxy: Awaited<ReturnType<typeof dbProxy>>;
  let viaProxy: DbHandle;
  let svc: TestService;

  beforeAll(async () => {
    direct = await createTestDb();
    proxy = await dbProxy(direct.url!);
    viaProxy = await createDb({ DATABASE_URL: proxy.url, poolSize: 5 });
    svc = await createTestService({ listen: true, db: { ...viaProxy, url: proxy.url } });
  });
  afterAll(async () => {
    await svc?.close();
    await viaProxy?.close();
    await proxy?.close();
    await direct?.close();
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

      proxy.cut();
      for (const [action, payload] of [['MeterValues', mv], ['StopTransaction', stop]] as const) {
        const err = await cli.call(action, payload).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toMatchObject({ rpcErrorCode: 'InternalError' });
        expect((err as Error).message).not.toMatch(SQL_OR_STACK);
      }
      expect((await fetch(`${svc.url}/readyz`)).status).toBe(503);
      const quarantined = await direct.db.selectFrom('ocpp_quarantine').select('id').where('charger_id', '=', ch.chargerId).execute();
      expect(quarantined).toEqual([]);

      proxy.restore();
      // the charger retries its transaction messages (twice here, as after a lost acknowledgement)
      for (let i = 0; i < 2; i++) {
        expect(await cli.call('MeterValues', mv)).toEqual({});
        expect(await cli.call('StopTransaction', stop)).toEqual({});
      }
      expect((await fetch(`${svc.url}/readyz`)).status).toBe(200);
    } finally {
      await cli.close();
    }
    const rows = await direct.db.selectFrom('meter_readings').select(['wh', 'context']).where('charger_id', '=', ch.chargerId).orderBy('measured_at').execute();
    expect(rows.map((r) => r.wh)).toEqual(['0', '300', '900']);
    const sessions = await direct.db.selectFrom('charging_sessions').selectAll().where('charger_id', '=', ch.chargerId).execute();
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ status: 'completed', energy_wh: '900', meter_stop_wh: '900' });
    expect(await direct.db.selectFrom('ocpp_quarantine').select('id').where('charger_id', '=', ch.chargerId).execute()).toEqual([]);
  });
});
