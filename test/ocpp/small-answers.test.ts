// Two small answers (D213, D214): a 2.0.1 id token of a type with an identifier but an empty one is Invalid, and the
// command route's refusal of an action names the charger's protocol and only its actions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, energyValue, hourAgoTimeline, type TestCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let user: { userId: string; token: string };
const { at } = hourAgoTimeline();
const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

beforeAll(async () => {
  svc = await createTestService({ listen: true });
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

const listPolicy = (ch: TestCharger) =>
  svc.app.inject({
    method: 'PUT',
    url: `/admin/chargers/${ch.chargerId}/id-tokens`,
    headers: admin,
    payload: { policy: 'list', tokens: [{ id_token: 'GOOD', status: 'Accepted' }] },
  });

describe('D213: a 2.0.1 id token of a type with an identifier, but an empty one, is Invalid', () => {
  for (const policy of ['accept_all', 'list'] as const) {
    it(`under ${policy}: Authorize and TransactionEvent answer Invalid, and the session records no id tag`, async () => {
      const ch = await anOcppCharger(svc, user);
      if (policy === 'list') expect((await listPolicy(ch)).statusCode).toBe(200);
      const cli = await connectCharger(svc, ch, 'ocpp2.0.1');
      const invalid = { idTokenInfo: { status: 'Invalid' } };
      try {
        for (const type of ['ISO14443', 'Central', 'eMAID', 'Local']) {
          expect(await cli.call('Authorize', { idToken: { idToken: '', type } })).toEqual(invalid);
        }
        expect(await cli.call('Authorize', { idToken: { idToken: '  ', type: 'ISO14443' } })).toEqual(invalid);
        const empty = { idToken: '', type: 'ISO14443' };
        const base = { transactionInfo: { transactionId: `EMPTY-${policy}` }, evse: { id: 1, connectorId: 1 } };
        expect(
          await cli.call('TransactionEvent', { ...base, eventType: 'Started', timestamp: at(0), triggerReason: 'Authorized', seqNo: 0, idToken: empty, meterValue: [energyValue('ocpp2.0.1', at(0), 1_000)] }),
        ).toEqual(invalid);
        expect(
          await cli.call('TransactionEvent', { ...base, eventType: 'Updated', timestamp: at(1), triggerReason: 'MeterValuePeriodic', seqNo: 1, idToken: { idToken: '', type: 'Central' }, meterValue: [energyValue('ocpp2.0.1', at(1), 1_100)] }),
        ).toEqual(invalid);
        expect(
          await cli.call('TransactionEvent', { ...base, eventType: 'Ended', timestamp: at(2), triggerReason: 'EVCommunicationLost', seqNo: 2, idToken: empty, meterValue: [energyValue('ocpp2.0.1', at(2), 1_200)] }),
        ).toEqual(invalid);
        // D183 stands: NoAuthorization is Accepted, an event without a token gets no idTokenInfo, a real token its verdict
        expect(await cli.call('Authorize', { idToken: { idToken: '', type: 'NoAuthorization' } })).toEqual({ idTokenInfo: { status: 'Accepted' } });
        expect(await cli.call('TransactionEvent', { ...base, eventType: 'Updated', timestamp: at(2), triggerReason: 'MeterValuePeriodic', seqNo: 3 })).toEqual({});
        const good = policy === 'list' ? 'GOOD' : 'ANY-CARD';
        expect(await cli.call('Authorize', { idToken: { idToken: good, type: 'ISO14443' } })).toEqual({ idTokenInfo: { status: 'Accepted' } });
      } finally {
        await cli.close();
      }
      // the empty token identified nobody: the session's id tag stays empty, its energy is recorded
      const s = await svc.deps.db.selectFrom('charging_sessions').select(['id_tag', 'energy_wh']).where('charger_id', '=', ch.chargerId).execute();
      expect(s).toEqual([{ id_tag: null, energy_wh: '200' }]);
    });
  }
});

describe('D214: an action the charger does not speak is refused with its own protocol and only its actions', () => {
  const command = (chargerId: string, action: string, payload: unknown = {}) =>
    svc.app.inject({ method: 'POST', url: `/admin/chargers/${chargerId}/commands`, headers: admin, payload: { action, payload } });

  it('a 1.6 charger and a 2.0.1 charger, connected and after they disconnected', async () => {
    const v16 = await anOcppCharger(svc, user);
    const v201 = await anOcppCharger(svc, user);
    const c16 = await connectCharger(svc, v16, 'ocpp1.6');
    const c201 = await connectCharger(svc, v201, 'ocpp2.0.1');
    const actions16 = 'Reset, TriggerMessage, ChangeConfiguration, GetConfiguration, RemoteStartTransaction, RemoteStopTransaction';
    const actions201 = 'Reset, TriggerMessage, SetVariables, GetVariables, RequestStartTransaction, RequestStopTransaction';
    const refusal = (action: string, name: string, protocol: string, actions: string) => ({
      error: 'invalid_request',
      detail: `${action} is not an ${name} action; this charger speaks ${protocol}: ${actions}`,
    });
    const check = async () => {
      for (const action of ['RequestStartTransaction', 'GetBaseReport', 'UnlockConnector']) {
        const res = await command(v16.chargerId, action, { idToken: { idToken: 'X', type: 'Central' }, remoteStartId: 1 });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual(refusal(action, 'OCPP 1.6', 'ocpp1.6', actions16));
      }
      for (const action of ['RemoteStartTransaction', 'GetConfiguration', 'GetBaseReport']) {
        const res = await command(v201.chargerId, action);
        expect(res.statusCode).toBe(400);
        expect(res.json()).toEqual(refusal(action, 'OCPP 2.0.1', 'ocpp2.0.1', actions201));
      }
    };
    try {
      await check();
      // an action of its own protocol goes on to the payload's check as before
      const bad = await command(v16.chargerId, 'Reset', { type: 'Sideways' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().detail).toMatch(/^payload: /);
    } finally {
      await c16.close();
      await c201.close();
    }
    // disconnected, each keeps the protocol it last spoke
    await check();
    // an unknown charger or one never connected: the schema and the handler answer as before
    const never = await anOcppCharger(svc, user);
    expect((await command(never.chargerId, 'Reset', { type: 'Soft' })).statusCode).toBe(409);
    expect((await command(never.chargerId, 'GetBaseReport')).json()).toMatchObject({ error: 'invalid_request', detail: expect.stringContaining('body.action') });
    expect((await command('00000000-0000-4000-8000-000000000000', 'Reset', { type: 'Soft' })).statusCode).toBe(404);
    expect((await command('not-a-uuid', 'GetBaseReport')).statusCode).toBe(400);
    // without the admin token nothing is told about the charger
    const anon = await svc.app.inject({ method: 'POST', url: `/admin/chargers/${v16.chargerId}/commands`, payload: { action: 'GetBaseReport', payload: {} } });
    expect(anon.statusCode).toBe(401);
  });
});
