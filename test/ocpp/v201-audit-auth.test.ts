// An outside audit of OCPP 2.0.1 (D183, D184): NoAuthorization tokens, and the 401 at the upgrade.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline, type TestCharger } from '../helpers/ocpp-factories.ts';
import { logSink, rawUpgrade } from '../helpers/raw-upgrade.ts';

const log = logSink();
let svc: TestService;
let user: { userId: string; token: string };
const { at } = hourAgoTimeline();

beforeAll(async () => {
  svc = await createTestService({ listen: true, logger: createLogger({ level: 'info', destination: log.sink }) });
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

const listPolicy = (ch: TestCharger) =>
  svc.app.inject({
    method: 'PUT',
    url: `/admin/chargers/${ch.chargerId}/id-tokens`,
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    payload: { policy: 'list', tokens: [{ id_token: 'GOOD', status: 'Accepted' }] },
  });

describe('D183: a NoAuthorization id token is Accepted, by Authorize and TransactionEvent alike', () => {
  for (const policy of ['accept_all', 'list'] as const) {
    it(`under ${policy}`, async () => {
      const ch = await anOcppCharger(svc, user);
      if (policy === 'list') expect((await listPolicy(ch)).statusCode).toBe(200);
      const cli = await connectCharger(svc, ch, 'ocpp2.0.1');
      const none = { idToken: '', type: 'NoAuthorization' };
      const base = { transactionInfo: { transactionId: `NA-${policy}` }, evse: { id: 1, connectorId: 1 } };
      try {
        expect(await cli.call('Authorize', { idToken: none })).toEqual({ idTokenInfo: { status: 'Accepted' } });
        expect(
          await cli.call('TransactionEvent', { ...base, eventType: 'Started', timestamp: at(0), triggerReason: 'CablePluggedIn', seqNo: 0, idToken: none, meterValue: [energyValue('ocpp2.0.1', at(0), 1_000)] }),
        ).toEqual({ idTokenInfo: { status: 'Accepted' } });
        expect(
          await cli.call('TransactionEvent', { ...base, eventType: 'Updated', timestamp: at(1), triggerReason: 'MeterValuePeriodic', seqNo: 1, idToken: none, meterValue: [energyValue('ocpp2.0.1', at(1), 1_100)] }),
        ).toEqual({ idTokenInfo: { status: 'Accepted' } });
        expect(
          await cli.call('TransactionEvent', { ...base, eventType: 'Ended', timestamp: at(2), triggerReason: 'EVCommunicationLost', seqNo: 2, idToken: none, meterValue: [energyValue('ocpp2.0.1', at(2), 1_200)] }),
        ).toEqual({ idTokenInfo: { status: 'Accepted' } });
        // an event without an idToken still gets no idTokenInfo
        expect(await cli.call('TransactionEvent', { ...base, eventType: 'Updated', timestamp: at(2), triggerReason: 'MeterValuePeriodic', seqNo: 3 })).toEqual({});
        // a real token under the list policy keeps its verdict
        if (policy === 'list') expect(await cli.call('Authorize', { idToken: { idToken: 'NOPE', type: 'ISO14443' } })).toEqual({ idTokenInfo: { status: 'Invalid' } });
      } finally {
        await cli.close();
      }
      const s = await svc.deps.db.selectFrom('charging_sessions').select(['id_tag', 'energy_wh']).where('charger_id', '=', ch.chargerId).execute();
      expect(s).toEqual([{ id_tag: null, energy_wh: '200' }]);
    });
  }
});

describe('D184: the 401 at the upgrade', () => {
  const basic = (user: string, password: string) => 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');
  const lastRefusal = () => log.lines.filter((l) => l.event === 'ocpp.refuse').at(-1);

  it('carries WWW-Authenticate: Basic realm, and the log says why (user name differs, no or bad header, wrong password)', async () => {
    const ch = await anOcppCharger(svc, user);
    const path = `/ocpp/${ch.identity}`;
    const cases: Array<[Record<string, string>, string]> = [
      [{ authorization: basic('someone-else', ch.password) }, 'basic_user_mismatch'],
      [{}, 'no_password'],
      [{ authorization: 'Bearer abc' }, 'bad_authorization'],
      [{ authorization: basic(ch.identity, 'wrong') }, 'wrong_password'],
      [{ authorization: basic('nobody', 'pw') }, 'basic_user_mismatch'],
    ];
    // D219: a reason already logged for this identity in the interval (the second basic_user_mismatch) is counted,
    // not logged again
    const counted = async (reason: string) =>
      (await svc.deps.metrics.getSingleMetric('ocpp_handshake_refused_total')!.get()).values.find((v) => v.labels.reason === reason)?.value;
    const logged = new Set<string>();
    for (const [headers, reason] of cases) {
      const before = await counted(reason);
      const res = await rawUpgrade(svc.url, path, headers);
      expect(res.status).toBe(401);
      expect(res.text).toMatch(/\r\nWWW-Authenticate: Basic realm="OCPP", charset="UTF-8"\r\n/);
      expect(await counted(reason)).toBe(before! + 1);
      if (!logged.has(reason)) expect(lastRefusal()).toMatchObject({ status: 401, reason, identity: ch.identity });
      logged.add(reason);
    }
    // an unknown identity is 401 with the challenge too
    const unknown = await rawUpgrade(svc.url, '/ocpp/NOT-REGISTERED-1', { authorization: basic('NOT-REGISTERED-1', 'pw') });
    expect(unknown.status).toBe(401);
    expect(unknown.text).toMatch(/WWW-Authenticate: Basic realm=/);
    expect(lastRefusal()).toMatchObject({ status: 401, reason: 'unknown_identity' });
    // the right credentials still connect; the service carries on
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    await cli.close();
    expect(JSON.stringify(log.lines)).not.toContain(ch.password);
  });
});
