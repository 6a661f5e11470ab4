// Issue 14 item 3: start and stop charging remotely. The admin API's two start commands (1.6
// RemoteStartTransaction, 2.0.1 RequestStartTransaction) and the owner's startCharging / stopCharging, against the
// charge-point simulator over OCPP: the charger answers Accepted, the session appears with the owner's id token,
// the stop ends it; both protocols; the charger's socket held by another service instance on the same database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChargePoint } from '../../simulator/charge-point.ts';
import { toRequest } from '../../src/cli/admin.ts';
import { ownerIdToken, startCharging, stopCharging } from '../../src/domain/charging/remote-control.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, eventually, type TestCharger } from '../helpers/ocpp-factories.ts';

let a: TestService;
let b: TestService;
let owner: { userId: string; token: string };
let stranger: { userId: string; token: string };
const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const PROTOCOLS = ['ocpp1.6', 'ocpp2.0.1'] as const;

beforeAll(async () => {
  a = await createTestService({ listen: true, env: { OCPP_CALL_TIMEOUT_SECONDS: '5' } });
  // a second service instance on the same database: it holds no sockets of the chargers below
  b = await createTestService({ listen: true, db: a.testDb, env: { OCPP_CALL_TIMEOUT_SECONDS: '5' } });
  owner = await aUser(a.deps);
  stranger = await aUser(a.deps);
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

/** the simulator, registered for `owner`, connected to instance `a` */
async function simulated(protocol: (typeof PROTOCOLS)[number]): Promise<{ ch: TestCharger; cp: ChargePoint }> {
  const ch = await anOcppCharger(a, owner);
  const cp = new ChargePoint({
    url: a.url.replace(/^http/, 'ws') + '/ocpp',
    protocol,
    identity: ch.identity,
    password: ch.password,
    liveMeterIntervalMs: 200,
    livePowerW: 7_400,
    heartbeats: false,
    autoReconnect: false,
  });
  await cp.start();
  return { ch, cp };
}

const sessionsOf = (chargerId: string) =>
  a.deps.db.selectFrom('charging_sessions').selectAll().where('charger_id', '=', chargerId).orderBy('started_at').execute();

describe('admin API: the two start commands', () => {
  for (const protocol of PROTOCOLS) {
    it(`${protocol}: ${protocol === 'ocpp1.6' ? 'RemoteStartTransaction' : 'RequestStartTransaction'} starts a session; the stop command ends it`, async () => {
      const { ch, cp } = await simulated(protocol);
      try {
        const start =
          protocol === 'ocpp1.6'
            ? { action: 'RemoteStartTransaction', payload: { connectorId: 1, idTag: 'ADMIN-TAG-1' } }
            : { action: 'RequestStartTransaction', payload: { evseId: 1, idToken: { idToken: 'ADMIN-TAG-1', type: 'Central' }, remoteStartId: 7 } };
        const res = await b.app.inject({ method: 'POST', url: `/admin/chargers/${ch.chargerId}/commands`, headers: admin, payload: start });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({ ok: true, action: start.action, response: { status: 'Accepted' } });
        const [s] = await eventually(async () => {
          const rows = await sessionsOf(ch.chargerId);
          expect(rows).toHaveLength(1);
          return rows;
        });
        expect(s).toMatchObject({ status: 'active', id_tag: 'ADMIN-TAG-1', connector_id: 1 });
        // the other protocol's start command is refused, as C6.6 says
        const wrong = await b.app.inject({
          method: 'POST',
          url: `/admin/chargers/${ch.chargerId}/commands`,
          headers: admin,
          payload: { action: protocol === 'ocpp1.6' ? 'RequestStartTransaction' : 'RemoteStartTransaction', payload: {} },
        });
        expect(wrong.statusCode).toBe(400);
        expect(wrong.json().error).toBe('invalid_request');
        const stop =
          protocol === 'ocpp1.6'
            ? { action: 'RemoteStopTransaction', payload: { transactionId: Number(s!.transaction_id) } }
            : { action: 'RequestStopTransaction', payload: { transactionId: s!.transaction_id } };
        const stopped = await b.app.inject({ method: 'POST', url: `/admin/chargers/${ch.chargerId}/commands`, headers: admin, payload: stop });
        expect(stopped.json()).toEqual({ ok: true, action: stop.action, response: { status: 'Accepted' } });
        await eventually(async () => expect((await sessionsOf(ch.chargerId))[0]).toMatchObject({ status: 'completed', stop_reason: 'Remote' }));
      } finally {
        await cp.close();
      }
    });
  }

  it('the CLI maps the start and stop commands to the command endpoint', () => {
    const path = '/admin/chargers/c1/commands';
    expect(toRequest(['remote-start', 'c1', '--id-tag', 'TAG1', '--connector', '2'])).toEqual({
      method: 'POST',
      path,
      body: { action: 'RemoteStartTransaction', payload: { connectorId: 2, idTag: 'TAG1' } },
    });
    expect(toRequest(['request-start', 'c1', '--id-token', 'TAG1', '--remote-start-id', '5'])).toEqual({
      method: 'POST',
      path,
      body: { action: 'RequestStartTransaction', payload: { evseId: 1, idToken: { idToken: 'TAG1', type: 'Central' }, remoteStartId: 5 } },
    });
    expect(toRequest(['remote-stop', 'c1', '42'])).toEqual({ method: 'POST', path, body: { action: 'RemoteStopTransaction', payload: { transactionId: 42 } } });
    expect(toRequest(['request-stop', 'c1', 'tx-9'])).toEqual({ method: 'POST', path, body: { action: 'RequestStopTransaction', payload: { transactionId: 'tx-9' } } });
    expect(toRequest(['command', 'c1', 'Reset', '{"type":"Soft"}'])).toEqual({ method: 'POST', path, body: { action: 'Reset', payload: { type: 'Soft' } } });
  });
});

describe("the owner's startCharging and stopCharging", () => {
  for (const protocol of PROTOCOLS) {
    it(`${protocol}: starts with the owner's id token through the other instance, the session appears, the stop ends it`, async () => {
      const { ch, cp } = await simulated(protocol);
      try {
        // b holds no socket: the call travels through ocpp_commands and the bus to a
        const started = await startCharging(b.deps, { userId: owner.userId, chargerId: ch.chargerId, connectorId: 1 });
        const idToken = ownerIdToken(owner.userId);
        expect(idToken).toMatch(/^ERE[0-9A-F]{17}$/);
        expect(started).toEqual({
          ok: true,
          action: protocol === 'ocpp1.6' ? 'RemoteStartTransaction' : 'RequestStartTransaction',
          response: { status: 'Accepted' },
          id_token: idToken,
        });
        const [s] = await eventually(async () => {
          const rows = await sessionsOf(ch.chargerId);
          expect(rows).toHaveLength(1);
          return rows;
        });
        expect(s).toMatchObject({ status: 'active', id_tag: idToken });
        // the session is the owner's: GET /sessions lists it with their token
        const listed = await a.app.inject({ method: 'GET', url: `/sessions?charger_id=${ch.chargerId}`, headers: { authorization: `Bearer ${owner.token}` } });
        expect(listed.json().sessions).toMatchObject([{ id: s!.id, status: 'active', id_tag: idToken }]);

        // another user can neither start on this charger nor stop this session
        await expect(startCharging(b.deps, { userId: stranger.userId, chargerId: ch.chargerId, connectorId: 1 })).rejects.toMatchObject({ code: 'charger_not_found' });
        await expect(stopCharging(b.deps, { userId: stranger.userId, sessionId: s!.id })).rejects.toMatchObject({ code: 'session_not_found' });

        const stopped = await stopCharging(b.deps, { userId: owner.userId, sessionId: s!.id });
        expect(stopped).toEqual({ ok: true, action: protocol === 'ocpp1.6' ? 'RemoteStopTransaction' : 'RequestStopTransaction', response: { status: 'Accepted' } });
        await eventually(async () => expect((await sessionsOf(ch.chargerId))[0]).toMatchObject({ status: 'completed', stop_reason: 'Remote' }));
        await expect(stopCharging(b.deps, { userId: owner.userId, sessionId: s!.id })).rejects.toMatchObject({ code: 'session_not_active' });
        expect(cp.received.map((r) => r.method)).toEqual(
          protocol === 'ocpp1.6' ? ['RemoteStartTransaction', 'RemoteStopTransaction'] : ['RequestStartTransaction', 'RequestStopTransaction'],
        );
      } finally {
        await cp.close();
      }
    });
  }

  it("under the list policy the owner's token is registered Accepted; an operator's Blocked entry refuses the start", async () => {
    const { ch, cp } = await simulated('ocpp1.6');
    try {
      const idToken = ownerIdToken(owner.userId);
      const put = (tokens: unknown[]) =>
        a.app.inject({ method: 'PUT', url: `/admin/chargers/${ch.chargerId}/id-tokens`, headers: admin, payload: { policy: 'list', tokens } });
      expect((await put([{ id_token: 'RFID-1', status: 'Accepted' }])).statusCode).toBe(200);
      await startCharging(a.deps, { userId: owner.userId, chargerId: ch.chargerId, connectorId: 1 });
      const listed = await a.deps.db.selectFrom('ocpp_id_tokens').select(['id_token', 'status']).where('charger_id', '=', ch.chargerId).orderBy('id_token').execute();
      expect(listed).toEqual([
        { id_token: idToken, status: 'Accepted' },
        { id_token: 'RFID-1', status: 'Accepted' },
      ]);
      const [s] = await eventually(async () => {
        const rows = await sessionsOf(ch.chargerId);
        expect(rows).toHaveLength(1);
        return rows;
      });
      await stopCharging(a.deps, { userId: owner.userId, sessionId: s!.id });
      await eventually(async () => expect((await sessionsOf(ch.chargerId))[0]!.status).toBe('completed'));

      expect((await put([{ id_token: idToken, status: 'Blocked' }])).statusCode).toBe(200);
      await expect(startCharging(a.deps, { userId: owner.userId, chargerId: ch.chargerId, connectorId: 1 })).rejects.toMatchObject({ code: 'id_token_refused' });
      expect(cp.received.map((r) => r.method)).toEqual(['RemoteStartTransaction', 'RemoteStopTransaction']);
    } finally {
      await cp.close();
    }
  });

  it('an offline charger: 409 charger_offline; a connector below 1: invalid_request', async () => {
    const ch = await anOcppCharger(a, owner);
    await expect(startCharging(a.deps, { userId: owner.userId, chargerId: ch.chargerId, connectorId: 1 })).rejects.toMatchObject({ code: 'charger_offline' });
    await expect(startCharging(a.deps, { userId: owner.userId, chargerId: ch.chargerId, connectorId: 0 })).rejects.toMatchObject({ code: 'invalid_request' });
  });
});
