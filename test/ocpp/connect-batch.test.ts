// The connect path in batches (connect-batches.ts) stores exactly what the one-charger path stores. The same
// fleet (both protocols, a catalog model and an unknown one, a charger set to Rejected, chargers with a session
// left open, a wrong password, an unknown identity) connects all at once, boots and reports its connectors, once
// with batching on and once with it off (INGEST_BATCH_MAX=0), each on its own database; the answers and the
// stored live state, charger models and provisionally closed sessions must be equal, charger by charger.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setRegistrationStatus } from '../../src/domain/chargers/ocpp-charger.ts';
import { markConnectedMany, markDisconnectedMany, recordConnectorStatusMany } from '../../src/domain/charging/connect-batch.ts';
import { markSeenMany } from '../../src/domain/charging/live-state.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, bootPayload, eventually, isoSeconds, ocppClient, type OcppProtocol } from '../helpers/ocpp-factories.ts';

const FLEET = 30;
const RUN = `${process.pid}-${Date.now().toString(36)}`;

interface Outcome {
  answers: string[];
  rows: unknown[];
}

async function runFleet(svc: TestService): Promise<Outcome> {
  const user = await aUser(svc.deps);
  const chargers = [];
  for (let i = 0; i < FLEET; i++) chargers.push(await anOcppCharger(svc, user, { identity: `CB-${RUN}-${i}` }));
  await setRegistrationStatus(svc.deps, chargers[3]!.chargerId, 'Rejected');
  const protocol = (i: number): OcppProtocol => (i % 2 === 0 ? 'ocpp1.6' : 'ocpp2.0.1');
  const started = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
  // chargers 5 and 6 start a session and go away without stopping it: their next boot closes it provisionally
  for (const i of [5, 6]) {
    const cli = ocppClient(svc, chargers[i]!.identity, chargers[i]!.password, [protocol(i)]);
    await cli.connect();
    await cli.call('BootNotification', bootPayload(protocol(i)));
    if (protocol(i) === 'ocpp1.6') {
      await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG-1', meterStart: 1000, timestamp: isoSeconds(started) });
    } else {
      await cli.call('TransactionEvent', {
        eventType: 'Started',
        timestamp: isoSeconds(started),
        triggerReason: 'Authorized',
        seqNo: 0,
        transactionInfo: { transactionId: `TX-${i}` },
        idToken: { idToken: 'TAG-1', type: 'ISO14443' },
        evse: { id: 1, connectorId: 1 },
        meterValue: [{ timestamp: isoSeconds(started), sampledValue: [{ value: 1000, measurand: 'Energy.Active.Import.Register', unitOfMeasure: { unit: 'Wh' } }] }],
      });
    }
    await cli.close();
  }

  const answers = await Promise.all(
    chargers.map(async (ch, i) => {
      const password = i === 7 ? 'wrong-password-0123456789' : ch.password;
      const identity = i === 8 ? `CB-${RUN}-unknown` : ch.identity;
      const cli = ocppClient(svc, identity, password, [protocol(i)]);
      try {
        await cli.connect();
      } catch (err) {
        return `refused ${(err as Error).message}`;
      }
      try {
        const vendor = i % 5 === 0 ? 'Nobody Makes This' : undefined;
        const boot = (await cli.call('BootNotification', bootPayload(protocol(i), vendor, vendor ? 'X-1' : undefined, `SN-${i}`))) as { status: string };
        // D135: a Rejected charger's statuses are refused (SecurityError), stored nowhere
        if (boot.status === 'Rejected') {
          const refused = await cli.call('StatusNotification', { connectorId: 1, errorCode: 'NoError', status: 'Available' }).then(
            () => 'answered',
            (e: { rpcErrorCode?: string }) => e.rpcErrorCode,
          );
          return `boot ${boot.status}, status ${refused}`;
        }
        for (const connectorId of [1, 2]) {
          const status = connectorId === 1 ? 'Available' : 'Unavailable';
          await cli.call(
            'StatusNotification',
            protocol(i) === 'ocpp1.6'
              ? { connectorId, errorCode: 'NoError', status }
              : { timestamp: new Date().toISOString(), connectorStatus: status, evseId: connectorId, connectorId: 1 },
          );
        }
        return `boot ${boot.status}`;
      } finally {
        await cli.close();
      }
    }),
  );

  const ids = chargers.map((c) => c.chargerId);
  const rows = await sql<Record<string, unknown>>`
    select c.id, c.ocpp_vendor, c.ocpp_model, c.catalog_model_id is not null as in_catalog, c.mid_certified,
           o.protocol, o.serial_number, o.firmware_version, o.boot_reason, o.boot_at is not null as booted,
           o.boot_answered_at is not null as answered, o.connector_status, o.registration_status,
           (select json_agg(json_build_object('status', s.status, 'provisional', s.end_provisional,
                   'ended', s.ended_at = s.started_at, 'stop', s.meter_stop_wh) order by s.started_at)
              from charging_sessions s where s.charger_id = c.id) as sessions
      from chargers c left join ocpp_chargers o on o.charger_id = c.id
     where c.id = any(${ids}::uuid[])`.execute(svc.deps.db);
  const byId = new Map(rows.rows.map((r) => [r.id as string, r]));
  return { answers, rows: ids.map((id) => ({ ...byId.get(id)!, id: undefined })) };
}

let batched: TestService;
let single: TestService;

beforeAll(async () => {
  batched = await createTestService({ listen: true });
  single = await createTestService({ listen: true, env: { INGEST_BATCH_MAX: '0' } });
});
afterAll(async () => {
  await batched?.close();
  await single?.close();
});

describe('the connect path in batches', () => {
  it('stores what the one-charger path stores, for a fleet connecting at once', async () => {
    const a = await runFleet(batched);
    const b = await runFleet(single);
    expect(a.answers).toEqual(b.answers);
    expect(a.rows).toEqual(b.rows);
    // not vacuous: refusals, a Rejected boot, provisional closes, both statuses, an unknown model
    expect(a.answers[7]).toBe('refused Unauthorized');
    expect(a.answers[8]).toBe('refused Unauthorized');
    expect(a.answers[3]).toBe('boot Rejected, status SecurityError');
    expect(a.answers.filter((x) => x === 'boot Accepted')).toHaveLength(FLEET - 3);
    const row = (i: number) => a.rows[i] as Record<string, unknown>;
    expect(row(5).sessions).toEqual([{ status: 'completed', provisional: true, ended: true, stop: 1000 }]);
    expect(row(1).connector_status).toEqual({ 1: 'Available', 2: 'Unavailable' });
    expect(row(1)).toMatchObject({ in_catalog: true, mid_certified: true, answered: true, serial_number: 'SN-1' });
    expect(row(10)).toMatchObject({ in_catalog: false, mid_certified: false, ocpp_vendor: 'Nobody Makes This' });
    expect(row(3)).toMatchObject({ answered: false, registration_status: 'Rejected', connector_status: {} });
    // and the batches were used: several boots in one batch
    const m = await batched.deps.metrics.getSingleMetricAsString('ocpp_connect_batch_items');
    const bootCount = /ocpp_connect_batch_items_count\{kind="boot",outcome="batched"\} (\d+)/.exec(m);
    const bootSum = /ocpp_connect_batch_items_sum\{kind="boot",outcome="batched"\} (\d+)/.exec(m);
    expect(Number(bootSum?.[1])).toBeGreaterThanOrEqual(FLEET - 2);
    expect(Number(bootCount?.[1])).toBeLessThan(Number(bootSum?.[1]));
    // and no batch of any kind failed and went one charger at a time (a broken statement would still store the
    // same rows through the fallback, only slowly)
    expect(m).toMatch(/ocpp_connect_batch_items_sum\{kind="status",outcome="batched"\} [1-9]/);
    expect(m).not.toMatch(/outcome="(fallback|failed)"/);
  });
});

describe('the disconnect path in batches', () => {
  it('writes a fleet dropping at once in a few statements, and an older socket never clears a newer connection', async () => {
    const svc = batched;
    const user = await aUser(svc.deps);
    const fleet: Array<Awaited<ReturnType<typeof anOcppCharger>>> = [];
    for (let i = 0; i < FLEET; i++) fleet.push(await anOcppCharger(svc, user, { identity: `DC-${RUN}-${i}` }));
    const clients = fleet.map((ch) => ocppClient(svc, ch.identity, ch.password, ['ocpp1.6']));
    await Promise.all(clients.map((c) => c.connect()));
    // charger 0 connects again: the older socket is closed by the server, its close must leave the newer row alone
    const newer = ocppClient(svc, fleet[0]!.identity, fleet[0]!.password, ['ocpp1.6']);
    const olderClosed = new Promise<void>((resolve) => clients[0]!.once('close', () => resolve()));
    await newer.connect();
    await olderClosed;
    const stateOf = async (ids: string[]) =>
      (
        await svc.deps.db
          .selectFrom('ocpp_chargers')
          .select(['charger_id', 'connected', 'connection_id', 'disconnected_at'])
          .where('charger_id', 'in', ids)
          .execute()
      ).sort((a, b) => ids.indexOf(a.charger_id) - ids.indexOf(b.charger_id));
    const before = await svc.deps.metrics.getSingleMetricAsString('ocpp_connect_batch_items');
    const sumOf = (m: string, k: 'sum' | 'count') =>
      Number(new RegExp(`ocpp_connect_batch_items_${k}\\{kind="disconnected",outcome="batched"\\} (\\d+)`).exec(m)?.[1] ?? 0);
    try {
      await Promise.all(clients.slice(1).map((c) => c.close()));
      const rest = fleet.slice(1).map((c) => c.chargerId);
      await eventually(async () => {
        const rows = await stateOf(rest);
        expect(rows).toHaveLength(FLEET - 1);
        for (const r of rows) expect(r).toMatchObject({ connected: false, disconnected_at: expect.any(Date) });
      });
      const [held] = await stateOf([fleet[0]!.chargerId]);
      expect(held!.connected).toBe(true);
      expect(await newer.call('Heartbeat', {})).toHaveProperty('currentTime');
      const after = await svc.deps.metrics.getSingleMetricAsString('ocpp_connect_batch_items');
      const items = sumOf(after, 'sum') - sumOf(before, 'sum');
      const batches = sumOf(after, 'count') - sumOf(before, 'count');
      // the fleet's closes (the replaced socket's close may land in this window too)
      expect(items).toBeGreaterThanOrEqual(FLEET - 1);
      expect(batches).toBeLessThan(items);
    } finally {
      await newer.close();
    }
    // and when the newer one closes, the charger is offline
    await eventually(async () => expect((await stateOf([fleet[0]!.chargerId]))[0]!.connected).toBe(false));
  });
});

describe('multi-row writes of the live state', () => {
  it('take their row locks in one order, so writes of the same chargers at once never deadlock', async () => {
    const svc = batched;
    const user = await aUser(svc.deps);
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) ids.push((await anOcppCharger(svc, user, { identity: `LK-${RUN}-${i}` })).chargerId);
    const at = new Date();
    const conn = (id: string) => `conn-${id}`;
    await markConnectedMany(svc.deps.db, ids.map((chargerId) => ({ chargerId, protocol: 'ocpp1.6', connectionId: conn(chargerId), instanceId: 'lock-test', at })));
    const reversed = [...ids].reverse();
    const shuffled = [...ids].sort(() => Math.random() - 0.5);
    // the same 200 rows written by four statements at once, each given the chargers in another order, ten times
    for (let round = 0; round < 10; round++) {
      await Promise.all([
        recordConnectorStatusMany(svc.deps.db, ids.map((chargerId) => ({ chargerId, connectorId: 1, status: `S${round}` }))),
        markSeenMany(svc.deps, reversed.map((chargerId) => ({ chargerId, connectionId: conn(chargerId), at }))),
        recordConnectorStatusMany(svc.deps.db, shuffled.map((chargerId) => ({ chargerId, connectorId: 2, status: `T${round}` }))),
        markConnectedMany(svc.deps.db, reversed.map((chargerId) => ({ chargerId, protocol: 'ocpp1.6', connectionId: conn(chargerId), instanceId: 'lock-test', at }))),
      ]);
    }
    await markDisconnectedMany(svc.deps.db, shuffled.map((chargerId) => ({ chargerId, connectionId: conn(chargerId), at })));
    const rows = await svc.deps.db.selectFrom('ocpp_chargers').select(['connected', 'connector_status']).where('charger_id', 'in', ids).execute();
    expect(rows).toHaveLength(200);
    for (const r of rows) expect(r).toEqual({ connected: false, connector_status: { 1: 'S9', 2: 'T9' } });
  });
});
