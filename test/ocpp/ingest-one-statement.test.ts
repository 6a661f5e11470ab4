// Group commit (ingest-pipeline.ts): a window of starts of new sessions, and a window of stops of sessions the
// sockets remember, are each written as one statement without an explicit transaction (batch-starts.ts
// applyStartsAlone, batch.ts applyRemembered), with what the one-message path gives: the sessions and their
// readings, 1.6 transaction ids, the id tags' verdicts, a session left open on the connector closed provisionally
// (C4.6), a resent start answered as before. The charger's power comes from its BootNotification (the step rule
// of C4.5), so its first reading after a start is one statement too. A window of idle connectors' readings (no
// transaction) is one statement too, and so is one in the running session its socket remembers; one that falls in
// a session otherwise (late, or after a later session began) goes the one-message way, which places it (C4.6).
// Which path wrote is read from /metrics.
import type { RPCClient } from 'ocpp-rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline, type TestCharger } from '../helpers/ocpp-factories.ts';

describe('one statement per window of starts or stops', () => {
  let svc: TestService;
  const clients: RPCClient[] = [];
  const { at } = hourAgoTimeline();

  beforeAll(async () => {
    // a long window: messages sent together are sure to share a batch
    svc = await createTestService({ listen: true, env: { INGEST_FLUSH_MS: '150' } });
  });
  afterAll(async () => {
    for (const c of clients) await c.close({ force: true }).catch(() => {});
    await svc?.close();
  });

  const metric = async (path: string) =>
    Number(new RegExp(`^ocpp_ingest_messages_total\\{path="${path}"\\} (\\d+)`, 'm').exec((await svc.app.inject({ method: 'GET', url: '/metrics' })).body)?.[1] ?? 0);
  const connect = async (ch: TestCharger, model?: { vendor: string; model: string }) => {
    const cli = await connectCharger(svc, ch, 'ocpp1.6', model ?? {});
    clients.push(cli);
    return cli;
  };
  const idTokens = (ch: TestCharger, tokens: Array<{ id_token: string; status: string; expires_at?: string }>) =>
    svc.app.inject({
      method: 'PUT',
      url: `/admin/chargers/${ch.chargerId}/id-tokens`,
      headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
      payload: { policy: 'list', tokens },
    });
  const sessionsOf = (ch: TestCharger) =>
    svc.deps.db
      .selectFrom('charging_sessions')
      .select(['transaction_id', 'status', 'end_provisional', 'meter_start_wh', 'meter_stop_wh', 'energy_wh', 'held_wh', 'id_tag', 'stop_reason'])
      .where('charger_id', '=', ch.chargerId)
      .orderBy('started_at')
      .execute();
  const readingsOf = (ch: TestCharger) =>
    svc.deps.db
      .selectFrom('meter_readings')
      .innerJoin('charging_sessions', 'charging_sessions.id', 'meter_readings.session_id')
      .select(['charging_sessions.transaction_id', 'meter_readings.wh', 'meter_readings.context', 'meter_readings.anomaly'])
      .where('meter_readings.charger_id', '=', ch.chargerId)
      .orderBy('meter_readings.measured_at')
      .execute();

  it('starts, readings and stops of four chargers: three statements, the verdicts and sessions of the one-message path', { timeout: 30_000 }, async () => {
    const user = await aUser(svc.deps);
    const chargers = [await anOcppCharger(svc, user), await anOcppCharger(svc, user), await anOcppCharger(svc, user), await anOcppCharger(svc, user)];
    // the first accepts every tag; the others keep a list
    for (const ch of chargers.slice(1)) {
      const put = await idTokens(ch, [
        { id_token: 'GOOD', status: 'Accepted' },
        { id_token: 'OLD', status: 'Accepted', expires_at: '2020-01-01T00:00:00Z' },
        { id_token: 'BLK', status: 'Blocked' },
      ]);
      expect(put.statusCode).toBe(200);
    }
    const tags = ['ANY', 'OLD', 'BLK', 'NOPE'];
    const verdicts = ['Accepted', 'Expired', 'Blocked', 'Invalid'];
    // two of them booted as an 11 kW model, the others as a model the catalog does not know (22 kW, the default)
    const halo = { vendor: 'Charge Amps', model: 'Halo' };
    const unknown = { vendor: 'Nobody', model: 'Nothing 1' };
    const cli = await Promise.all(chargers.map((ch, i) => connect(ch, i % 2 === 0 ? halo : unknown)));

    const oneBefore = await metric('one_statement');
    const setBefore = await metric('set_based');
    const started = (await Promise.all(cli.map((c, i) => c.call('StartTransaction', { connectorId: 1, idTag: tags[i], meterStart: 1000 * (i + 1), timestamp: at(0) })))) as Array<{
      transactionId: number;
      idTagInfo: { status: string };
    }>;
    expect(started.map((s) => s.idTagInfo.status)).toEqual(verdicts);
    const ids = started.map((s) => s.transactionId);
    expect(new Set(ids).size).toBe(4);
    for (const id of ids) expect(Number.isInteger(id) && id > 0).toBe(true);
    expect(await metric('one_statement')).toBe(oneBefore + 4);

    // one minute later, 300 Wh more: more than 11 kW could deliver, less than 22 kW
    await Promise.all(cli.map((c, i) => c.call('MeterValues', { connectorId: 1, transactionId: ids[i], meterValue: [energyValue('ocpp1.6', at(1), 1000 * (i + 1) + 300)] })));
    expect(await metric('one_statement')).toBe(oneBefore + 8); // the power came with the boot; the session with the start

    const stopped = (await Promise.all(
      cli.map((c, i) => c.call('StopTransaction', { transactionId: ids[i], idTag: tags[i], meterStop: 1000 * (i + 1) + 400, timestamp: at(2), reason: 'Local' })),
    )) as Array<{ idTagInfo: { status: string } }>;
    expect(stopped.map((s) => s.idTagInfo.status)).toEqual(verdicts);
    expect(await metric('one_statement')).toBe(oneBefore + 12);
    expect(await metric('set_based')).toBe(setBefore);

    for (const [i, ch] of chargers.entries()) {
      const held = i % 2 === 0; // the 11 kW model's step of 300 Wh in a minute is held for review (C5.5)
      expect(await sessionsOf(ch)).toEqual([
        {
          transaction_id: String(ids[i]),
          status: 'completed',
          end_provisional: false,
          meter_start_wh: String(1000 * (i + 1)),
          meter_stop_wh: String(1000 * (i + 1) + 400),
          energy_wh: held ? '100' : '400',
          held_wh: held ? '300' : '0',
          id_tag: tags[i],
          stop_reason: 'Local',
        },
      ]);
      expect(await readingsOf(ch)).toEqual([
        { transaction_id: String(ids[i]), wh: String(1000 * (i + 1)), context: 'Transaction.Begin', anomaly: null },
        { transaction_id: String(ids[i]), wh: String(1000 * (i + 1) + 300), context: 'Sample.Periodic', anomaly: held ? 'implausible_power' : null },
        { transaction_id: String(ids[i]), wh: String(1000 * (i + 1) + 400), context: 'Transaction.End', anomaly: null },
      ]);
    }
  });

  it('a start closes the session left open on its connector, in the same statement', { timeout: 30_000 }, async () => {
    const user = await aUser(svc.deps);
    const ch = await anOcppCharger(svc, user);
    const other = await anOcppCharger(svc, user);
    const c = await connect(ch);
    const o = await connect(other);
    const first = (await c.call('StartTransaction', { connectorId: 1, idTag: 'A', meterStart: 500, timestamp: at(0) })) as { transactionId: number };
    await c.call('MeterValues', { connectorId: 1, transactionId: first.transactionId, meterValue: [energyValue('ocpp1.6', at(3), 650)] });

    // no StopTransaction came: the next start, in a window with another charger's, closes the first session
    const oneBefore = await metric('one_statement');
    const [second] = (await Promise.all([
      c.call('StartTransaction', { connectorId: 1, idTag: 'A', meterStart: 700, timestamp: at(10) }),
      o.call('StartTransaction', { connectorId: 1, idTag: 'B', meterStart: 0, timestamp: at(10) }),
    ])) as Array<{ transactionId: number }>;
    expect(await metric('one_statement')).toBe(oneBefore + 2);
    const s = await svc.deps.db
      .selectFrom('charging_sessions')
      .select(['transaction_id', 'status', 'end_provisional', 'ended_at', 'meter_stop_wh', 'energy_wh'])
      .where('charger_id', '=', ch.chargerId)
      .orderBy('started_at')
      .execute();
    expect(s).toEqual([
      { transaction_id: String(first.transactionId), status: 'completed', end_provisional: true, ended_at: new Date(at(3)), meter_stop_wh: '650', energy_wh: '150' },
      { transaction_id: String(second!.transactionId), status: 'active', end_provisional: false, ended_at: null, meter_stop_wh: null, energy_wh: '0' },
    ]);
  });

  it('a resent start in a window of new ones is answered as before; nothing is written twice', { timeout: 30_000 }, async () => {
    const user = await aUser(svc.deps);
    const chargers = [await anOcppCharger(svc, user), await anOcppCharger(svc, user), await anOcppCharger(svc, user)];
    const cli = await Promise.all(chargers.map((ch) => connect(ch)));
    const start = { connectorId: 1, idTag: 'R', meterStart: 2000, timestamp: at(20) };
    const first = (await cli[0]!.call('StartTransaction', start)) as { transactionId: number };

    // the first charger sends its start again (its answer was lost), the others start
    const oneBefore = await metric('one_statement');
    const setBefore = await metric('set_based');
    const again = (await Promise.all(cli.map((c) => c.call('StartTransaction', start)))) as Array<{ transactionId: number; idTagInfo: { status: string } }>;
    expect(again[0]!.transactionId).toBe(first.transactionId);
    expect(new Set(again.map((a) => a.transactionId)).size).toBe(3);
    expect(again.map((a) => a.idTagInfo.status)).toEqual(['Accepted', 'Accepted', 'Accepted']);
    // the statement found the resent start's session and wrote nothing; the two new ones were written set-based
    // in the batch's transaction, the resent one by the one-message path
    expect(await metric('one_statement')).toBe(oneBefore);
    expect(await metric('set_based')).toBe(setBefore + 2);
    for (const [i, ch] of chargers.entries()) {
      expect((await sessionsOf(ch)).map((s) => s.transaction_id)).toEqual([String(again[i]!.transactionId)]);
      expect((await readingsOf(ch)).map((r) => r.wh)).toEqual(['2000']);
    }
  });
  const allReadingsOf = (ch: TestCharger) =>
    svc.deps.db
      .selectFrom('meter_readings')
      .select(['session_id', 'connector_id', 'measured_at', 'wh', 'context', 'anomaly'])
      .where('charger_id', '=', ch.chargerId)
      .orderBy('measured_at')
      .execute();
  const idleValue = (at: string, wh: number) => ({ timestamp: at, sampledValue: [{ value: String(wh), measurand: 'Energy.Active.Import.Register', unit: 'Wh', context: 'Sample.Clock' }] });

  it('idle connectors\' readings outside any transaction: one statement, stored without a session; sent again, stored once', { timeout: 30_000 }, async () => {
    const user = await aUser(svc.deps);
    const chargers = [await anOcppCharger(svc, user), await anOcppCharger(svc, user), await anOcppCharger(svc, user)];
    const cli = await Promise.all(chargers.map((ch) => connect(ch)));
    // the third reports the station's meter (connector 0)
    const send = () => Promise.all(cli.map((c, i) => c.call('MeterValues', { connectorId: i === 2 ? 0 : 1, meterValue: [idleValue(at(50), 7000 + i)] })));
    const oneBefore = await metric('one_statement');
    expect(await send()).toEqual([{}, {}, {}]);
    expect(await metric('one_statement')).toBe(oneBefore + 3);
    expect(await send()).toEqual([{}, {}, {}]); // a charger that missed the answer sends it again
    expect(await metric('one_statement')).toBe(oneBefore + 6);
    for (const [i, ch] of chargers.entries()) {
      expect(await allReadingsOf(ch)).toEqual([{ session_id: null, connector_id: i === 2 ? 0 : 1, measured_at: new Date(at(50)), wh: String(7000 + i), context: 'Sample.Clock', anomaly: null }]);
    }
  });

  it('a reading without a transaction in the session its socket remembers is one statement too; a late one is placed by the one-message path', { timeout: 30_000 }, async () => {
    const user = await aUser(svc.deps);
    const [charging, idle] = [await anOcppCharger(svc, user), await anOcppCharger(svc, user)];
    const [c, i] = [await connect(charging), await connect(idle)];
    await c.call('StartTransaction', { connectorId: 1, idTag: 'P', meterStart: 100, timestamp: at(57) });
    const oneBefore = await metric('one_statement');
    const setBefore = await metric('set_based');
    const handlerBefore = await metric('handler');
    await Promise.all([
      c.call('MeterValues', { connectorId: 1, meterValue: [idleValue(at(59), 150)] }), // no transaction id, in the session
      i.call('MeterValues', { connectorId: 1, meterValue: [idleValue(at(59), 9000)] }),
    ]);
    expect(await metric('one_statement')).toBe(oneBefore + 2);
    expect(await metric('handler')).toBe(handlerBefore);
    // sent late (before the session's last reading): C4.6 places it by its time, the one-message path's way
    await c.call('MeterValues', { connectorId: 1, meterValue: [idleValue(at(58), 120)] });
    expect(await metric('handler')).toBe(handlerBefore + 1);
    expect(await metric('set_based')).toBe(setBefore);
    const session = await svc.deps.db.selectFrom('charging_sessions').select(['id', 'energy_wh']).where('charger_id', '=', charging.chargerId).executeTakeFirstOrThrow();
    expect(session.energy_wh).toBe('50');
    expect((await allReadingsOf(charging)).map((r) => [r.session_id, r.wh])).toEqual([
      [session.id, '100'],
      [session.id, '120'],
      [session.id, '150'],
    ]);
    expect((await allReadingsOf(idle)).map((r) => [r.session_id, r.wh])).toEqual([[null, '9000']]);
  });

  it('a reading without a transaction after a later session began on the connector goes to that session, not the remembered one', { timeout: 30_000 }, async () => {
    const user = await aUser(svc.deps);
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp2.0.1');
    clients.push(cli);
    const evse = { id: 1, connectorId: 1 };
    const event = (eventType: string, tx: string, seqNo: number, min: number, wh: number) =>
      cli.call('TransactionEvent', {
        eventType, timestamp: at(min), triggerReason: eventType === 'Started' ? 'Authorized' : 'MeterValuePeriodic', seqNo,
        transactionInfo: { transactionId: tx }, evse, ...(eventType === 'Started' ? { idToken: { idToken: 'P', type: 'ISO14443' } } : {}),
        meterValue: [energyValue('ocpp2.0.1', at(min), wh)],
      });
    await event('Started', 'T-A', 0, 50, 1000);
    await event('Updated', 'T-A', 1, 51, 1100); // the socket remembers T-A
    await event('Updated', 'T-B', 2, 52, 1200); // T-B's Started never came: a later session on the same EVSE
    const oneBefore = await metric('one_statement');
    await cli.call('MeterValues', { evseId: 1, meterValue: [energyValue('ocpp2.0.1', at(53), 1300)] });
    expect(await metric('one_statement')).toBe(oneBefore);
    const sessions = await svc.deps.db.selectFrom('charging_sessions').select(['id', 'transaction_id']).where('charger_id', '=', ch.chargerId).orderBy('started_at').execute();
    expect(sessions.map((x) => x.transaction_id)).toEqual(['T-A', 'T-B']);
    const byId = new Map(sessions.map((x) => [x.id, x.transaction_id]));
    expect((await allReadingsOf(ch)).map((r) => [byId.get(r.session_id!), r.wh])).toEqual([
      ['T-A', '1000'],
      ['T-A', '1100'],
      ['T-B', '1200'],
      ['T-B', '1300'],
    ]);
  });

  it('readings naming a transaction of which there is no session are stored without one, set-based in the batch', { timeout: 30_000 }, async () => {
    const user = await aUser(svc.deps);
    const chargers = [await anOcppCharger(svc, user), await anOcppCharger(svc, user)];
    const cli = await Promise.all(chargers.map((ch) => connect(ch)));
    const setBefore = await metric('set_based');
    const handlerBefore = await metric('handler');
    const answers = await Promise.all(cli.map((c, i) => c.call('MeterValues', { connectorId: 1, transactionId: 987_650 + i, meterValue: [idleValue(at(70), 4000 + i)] })));
    expect(answers).toEqual([{}, {}]);
    expect(await metric('set_based')).toBe(setBefore + 2);
    expect(await metric('handler')).toBe(handlerBefore);
    for (const [i, ch] of chargers.entries()) expect((await allReadingsOf(ch)).map((r) => [r.session_id, r.connector_id, r.wh])).toEqual([[null, 1, String(4000 + i)]]);
  });
});
