// Issue 4 "What must be shown": a full session gives the same stored session and Wh in 1.6 and 2.0.1, and
// GET /chargers shows it live; BootNotification resolves the catalog (MID) or accepts an unknown model as non-MID.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundledCatalog } from '../../src/domain/catalog/load.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, isoSeconds, type OcppProtocol } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let user: { userId: string; token: string };

beforeAll(async () => {
  svc = await createTestService({ listen: true });
  await loadBundledCatalog(svc.deps.db);
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

const iso = isoSeconds;

async function chargerItem(id: string) {
  const res = await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(user.token) });
  expect(res.statusCode).toBe(200);
  return (res.json().chargers as Array<Record<string, unknown>>).find((c) => c.id === id)!;
}

describe.each(['ocpp1.6', 'ocpp2.0.1'] as OcppProtocol[])('a full session over %s', (protocol) => {
  it('boot, status, authorize, start, meter values, stop: stored session, readings and live view', async () => {
    const ch = await anOcppCharger(svc, user, { nickname: `Garage ${protocol}` });
    const cli = await connectCharger(svc, ch, protocol);
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 10 * 60_000;
    const v16 = protocol === 'ocpp1.6';
    try {
      await cli.call(
        'StatusNotification',
        v16
          ? { connectorId: 1, errorCode: 'NoError', status: 'Preparing' }
          : { timestamp: iso(t0), connectorStatus: 'Occupied', evseId: 1, connectorId: 1 },
      );
      const auth = (await cli.call('Authorize', v16 ? { idTag: 'TAG-1' } : { idToken: { idToken: 'TAG-1', type: 'ISO14443' } })) as Record<string, { status: string }>;
      expect(v16 ? auth.idTagInfo!.status : auth.idTokenInfo!.status).toBe('Accepted');

      let txId: string;
      if (v16) {
        const start = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'TAG-1', meterStart: 1000, timestamp: iso(t0) })) as {
          transactionId: number;
          idTagInfo: { status: string };
        };
        expect(start.idTagInfo.status).toBe('Accepted');
        expect(Number.isInteger(start.transactionId)).toBe(true);
        txId = String(start.transactionId);
        for (const [i, wh] of [[1, 1300], [2, 1600]] as const) {
          await cli.call('MeterValues', { connectorId: 1, transactionId: start.transactionId, meterValue: [energyValue(protocol, iso(t0 + i * 60_000), wh)] });
        }
      } else {
        txId = 'tx-' + ch.identity;
        const base = { transactionInfo: { transactionId: txId }, evse: { id: 1, connectorId: 1 } };
        const res = (await cli.call('TransactionEvent', {
          ...base,
          eventType: 'Started',
          timestamp: iso(t0),
          triggerReason: 'Authorized',
          seqNo: 0,
          idToken: { idToken: 'TAG-1', type: 'ISO14443' },
          meterValue: [energyValue(protocol, iso(t0), 1000, { context: 'Transaction.Begin' })],
        })) as { idTokenInfo: { status: string } };
        expect(res.idTokenInfo.status).toBe('Accepted');
        for (const [i, wh] of [[1, 1300], [2, 1600]] as const) {
          await cli.call('TransactionEvent', {
            ...base,
            eventType: 'Updated',
            timestamp: iso(t0 + i * 60_000),
            triggerReason: 'MeterValuePeriodic',
            seqNo: i,
            meterValue: [energyValue(protocol, iso(t0 + i * 60_000), wh)],
          });
        }
      }

      const live = await chargerItem(ch.chargerId);
      expect(live).toMatchObject({
        nickname: `Garage ${protocol}`,
        connection_type: 'ocpp',
        status: 'online',
        mid_certified: true,
        is_charging: true,
        latest_meter_wh: 1600,
        meter_updated_at: iso(t0 + 120_000),
        current_session: { started_at: iso(t0), kwh_so_far: 0.6, id_tag: 'TAG-1', estimated_euro: 0, review: null },
      });

      if (v16) {
        await cli.call('StopTransaction', { transactionId: Number(txId), idTag: 'TAG-1', meterStop: 1900, timestamp: iso(t0 + 180_000), reason: 'Local' });
      } else {
        await cli.call('TransactionEvent', {
          eventType: 'Ended',
          timestamp: iso(t0 + 180_000),
          triggerReason: 'EVCommunicationLost',
          seqNo: 3,
          transactionInfo: { transactionId: txId, stoppedReason: 'Local' },
          evse: { id: 1, connectorId: 1 },
          meterValue: [energyValue(protocol, iso(t0 + 180_000), 1900, { context: 'Transaction.End' })],
        });
      }

      const s = await svc.deps.db.selectFrom('charging_sessions').selectAll().where('charger_id', '=', ch.chargerId).execute();
      expect(s).toHaveLength(1);
      expect(s[0]).toMatchObject({
        transaction_id: txId,
        connector_id: 1,
        id_tag: 'TAG-1',
        status: 'completed',
        end_provisional: false,
        meter_start_wh: '1000',
        meter_stop_wh: '1900',
        energy_wh: '900',
      });
      expect(s[0]!.started_at.toISOString()).toBe(new Date(t0).toISOString());
      expect(s[0]!.ended_at!.toISOString()).toBe(new Date(t0 + 180_000).toISOString());
      const readings = await svc.deps.db
        .selectFrom('meter_readings')
        .select(['wh', 'session_id', 'anomaly', 'phase'])
        .where('charger_id', '=', ch.chargerId)
        .orderBy('measured_at')
        .execute();
      expect(readings.map((r) => r.wh)).toEqual(['1000', '1300', '1600', '1900']);
      expect(readings.every((r) => r.session_id === s[0]!.id && r.anomaly === null && r.phase === '')).toBe(true);

      const after = await chargerItem(ch.chargerId);
      expect(after.is_charging).toBe(false);
      expect(after).not.toHaveProperty('current_session');
      expect(after.latest_meter_wh).toBe(1900);

      const sessions = await svc.app.inject({ method: 'GET', url: `/sessions?charger_id=${ch.chargerId}`, headers: bearer(user.token) });
      expect(sessions.json().sessions).toEqual([
        {
          id: s[0]!.id,
          charger_id: ch.chargerId,
          charger_nickname: `Garage ${protocol}`,
          started_at: iso(t0),
          ended_at: iso(t0 + 180_000),
          kwh: 0.9,
          status: 'completed',
          id_tag: 'TAG-1',
          counts_for_ere: false,
          ere_credits: 0,
          estimated_euro: 0,
          review: null,
          signed: { readings: 0, verified: 0, invalid: 0 },
        },
      ]);
    } finally {
      await cli.close();
    }
  });

  it('BootNotification of a catalog model sets mid_certified; an unknown model is accepted as non-MID', async () => {
    const mid = await anOcppCharger(svc, user);
    const c1 = await connectCharger(svc, mid, protocol, { vendor: 'Alfen BV', model: 'NG910-60023' });
    await c1.close();
    const other = await anOcppCharger(svc, user);
    const c2 = await connectCharger(svc, other, protocol, { vendor: 'NoName', model: 'X-1' });
    await c2.close();
    const rows = await svc.deps.db
      .selectFrom('chargers')
      .innerJoin('ocpp_chargers', 'ocpp_chargers.charger_id', 'chargers.id')
      .select(['chargers.id', 'mid_certified', 'catalog_model_id', 'ocpp_vendor', 'ocpp_model', 'ocpp_chargers.serial_number', 'firmware_version', 'protocol'])
      .where('chargers.id', 'in', [mid.chargerId, other.chargerId])
      .execute();
    const m = rows.find((r) => r.id === mid.chargerId)!;
    const o = rows.find((r) => r.id === other.chargerId)!;
    expect(m).toMatchObject({ mid_certified: true, ocpp_vendor: 'Alfen BV', ocpp_model: 'NG910-60023', serial_number: 'SN-1', firmware_version: '6.1.0', protocol });
    expect(m.catalog_model_id).toEqual(expect.any(String));
    expect(o).toMatchObject({ mid_certified: false, catalog_model_id: null, ocpp_vendor: 'NoName', ocpp_model: 'X-1' });
  });
});
