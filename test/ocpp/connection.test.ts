// C4.1/C4.2 at the socket: subprotocols, paths, auth, replacement, malformed and oversized frames, tolerance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, bootPayload, connectCharger, ocppClient, ocppUrl, eventually } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let user: { userId: string; token: string };

beforeAll(async () => {
  svc = await createTestService({ listen: true, env: { OCPP_MAX_FRAME_BYTES: '4096' } });
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

const stateOf = (chargerId: string) =>
  svc.deps.db.selectFrom('ocpp_chargers').selectAll().where('charger_id', '=', chargerId).executeTakeFirstOrThrow();

function rawSocket(path: string, identity: string, password: string, protocols: string[]) {
  const auth = 'Basic ' + Buffer.from(`${identity}:${password}`).toString('base64');
  return new WebSocket(svc.url.replace(/^http/, 'ws') + path, protocols, { headers: { authorization: auth } });
}

function nextMessage(ws: WebSocket): Promise<unknown> {
  return new Promise((resolve) => ws.once('message', (d) => resolve(JSON.parse(d.toString()))));
}


function closed(c: { once(ev: 'close', fn: (e: unknown) => void): unknown }): Promise<unknown> {
  return new Promise((resolve) => c.once('close', resolve));
}

describe('upgrade (C4.1, C4.2)', () => {
  it('serves a charger that offers no subprotocol as OCPP 1.6', async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = ocppClient(svc, ch.identity, ch.password, []);
    await cli.connect();
    try {
      expect(await cli.call('BootNotification', bootPayload('ocpp1.6'))).toMatchObject({ status: 'Accepted', interval: 300 });
    } finally {
      await cli.close();
    }
    expect((await stateOf(ch.chargerId)).protocol).toBe('ocpp1.6');
  });

  it('prefers 2.0.1 when both are offered and refuses a charger that offers only ocpp2.1', async () => {
    const ch = await anOcppCharger(svc, user);
    const both = ocppClient(svc, ch.identity, ch.password, ['ocpp1.6', 'ocpp2.0.1']);
    await both.connect();
    expect(both.protocol).toBe('ocpp2.0.1');
    await both.close();
    const only21 = ocppClient(svc, ch.identity, ch.password, ['ocpp2.1']);
    await expect(only21.connect()).rejects.toMatchObject({ code: 400 });
  });

  it('tolerates a trailing slash after the identity', async () => {
    const ch = await anOcppCharger(svc, user);
    const ws = rawSocket(`/ocpp/${ch.identity}/`, ch.identity, ch.password, ['ocpp1.6']);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(JSON.stringify([2, 'm1', 'Heartbeat', {}]));
    const res = (await nextMessage(ws)) as unknown[];
    expect(res.slice(0, 2)).toEqual([3, 'm1']);
    expect(res[2]).toHaveProperty('currentTime');
    ws.close();
  });

  it('refuses an unknown identity and a wrong password with 401, storing nothing', async () => {
    const unknown = ocppClient(svc, 'NO-SUCH-CP', 'whatever-password', ['ocpp1.6']);
    await expect(unknown.connect()).rejects.toMatchObject({ code: 401 });
    const ch = await anOcppCharger(svc, user);
    const wrong = ocppClient(svc, ch.identity, ch.password + 'x', ['ocpp1.6']);
    await expect(wrong.connect()).rejects.toMatchObject({ code: 401 });
    const st = await stateOf(ch.chargerId);
    expect(st).toMatchObject({ connected: false, connection_id: null, last_seen_at: null });
    const ws = new WebSocket(ocppUrl(svc) + '/' + ch.identity, ['ocpp1.6']); // no Authorization header
    const status = await new Promise((resolve) => ws.once('unexpected-response', (_req, res) => resolve(res.statusCode)));
    expect(status).toBe(401);
  });

  it('lets a newer connection replace an older one; the older close never clears the newer state', async () => {
    const ch = await anOcppCharger(svc, user);
    const c1 = await connectCharger(svc, ch, 'ocpp1.6');
    const first = await stateOf(ch.chargerId);
    const c1Closed = closed(c1);
    const c2 = await connectCharger(svc, ch, 'ocpp1.6');
    await c1Closed;
    try {
      expect(await c2.call('Heartbeat', {})).toHaveProperty('currentTime');
      const st = await stateOf(ch.chargerId);
      expect(st.connected).toBe(true);
      expect(st.connection_id).not.toBe(first.connection_id);
      const list = await svc.app.inject({ method: 'GET', url: '/chargers', headers: { authorization: `Bearer ${user.token}` } });
      expect(list.json().chargers.find((c: { id: string }) => c.id === ch.chargerId).status).toBe('online');
    } finally {
      await c2.close();
    }
    // after the newer one closes too, the charger is offline
    await eventually(async () => expect((await stateOf(ch.chargerId)).connected).toBe(false));
  });
});

describe('frames and messages (C4.1, C4.4)', () => {
  it('answers a malformed frame with a CALLERROR and keeps the connection', async () => {
    const ch = await anOcppCharger(svc, user);
    const ws = rawSocket(`/ocpp/${ch.identity}`, ch.identity, ch.password, ['ocpp1.6']);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send('this is not json');
    const err = (await nextMessage(ws)) as unknown[];
    expect(err[0]).toBe(4);
    // OCPP 1.6's code (D119): RpcFrameworkError and MessageTypeNotSupported are 2.0.1's
    expect(err[2]).toBe('FormationViolation');
    ws.send(JSON.stringify([9, 'm9', 'Heartbeat', {}]));
    const unknownType = (await nextMessage(ws)) as unknown[];
    expect([unknownType[0], unknownType[2]]).toEqual([4, 'FormationViolation']);
    ws.send(JSON.stringify([2, 'm2', 'Heartbeat', {}]));
    expect(((await nextMessage(ws)) as unknown[]).slice(0, 2)).toEqual([3, 'm2']);
    ws.close();
  });

  it('a 2.0.1 socket gets 2.0.1\'s codes for the same frames (D119)', async () => {
    const ch = await anOcppCharger(svc, user);
    const ws = rawSocket(`/ocpp/${ch.identity}`, ch.identity, ch.password, ['ocpp2.0.1']);
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send('this is not json');
    expect(((await nextMessage(ws)) as unknown[])[2]).toBe('RpcFrameworkError');
    ws.send(JSON.stringify([9, 'm9', 'Heartbeat', {}]));
    expect(((await nextMessage(ws)) as unknown[])[2]).toBe('MessageTypeNotSupported');
    ws.close();
  });

  it('closes a connection whose frame exceeds OCPP_MAX_FRAME_BYTES; the charger reconnects and works', async () => {
    const ch = await anOcppCharger(svc, user);
    const c1 = await connectCharger(svc, ch, 'ocpp1.6');
    const gone = closed(c1);
    await expect(c1.call('DataTransfer', { vendorId: 'x', data: 'a'.repeat(10_000) })).rejects.toBeTruthy();
    expect(await gone).toMatchObject({ code: 1009 });
    const c2 = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      expect(await c2.call('DataTransfer', { vendorId: 'x', data: 'small' })).toEqual({ status: 'UnknownVendorId' });
    } finally {
      await c2.close();
    }
  });

  it('never answers a StatusNotification with an error, even a schema-invalid one, and keeps going', async () => {
    for (const protocol of ['ocpp1.6', 'ocpp2.0.1'] as const) {
      const ch = await anOcppCharger(svc, user);
      const cli = await connectCharger(svc, ch, protocol);
      try {
        expect(await cli.call('StatusNotification', { connectorId: 'one', status: 'Sleeping' })).toEqual({});
        // D138: a number that is no connector is acknowledged and stored nowhere
        for (const n of [-5, 100, 1_000_000_000]) {
          const far = protocol === 'ocpp1.6'
            ? { connectorId: n, errorCode: 'NoError', status: 'Available' }
            : { timestamp: '2026-11-22T10:00:00Z', connectorStatus: 'Available', evseId: n, connectorId: 1 };
          expect(await cli.call('StatusNotification', far)).toEqual({});
        }
        const ok = protocol === 'ocpp1.6'
          ? { connectorId: 1, errorCode: 'NoError', status: 'charging' }
          : { timestamp: '2026-11-22T10:00:00', connectorStatus: 'occupied', evseId: 1, connectorId: 1 };
        expect(await cli.call('StatusNotification', ok)).toEqual({});
        expect(await cli.call('Heartbeat', {})).toHaveProperty('currentTime');
      } finally {
        await cli.close();
      }
      const st = await stateOf(ch.chargerId);
      expect(st.connector_status).toEqual({ 1: protocol === 'ocpp1.6' ? 'Charging' : 'Occupied' });
    }
    const text = await svc.deps.metrics.getSingleMetricAsString('ocpp_quirks_total');
    expect(text).toContain('kind="invalid_status_notification"');
  });

  it('answers what it cannot understand with the protocol CALLERROR and unknown actions with NotSupported/NotImplemented', async () => {
    const ch = await anOcppCharger(svc, user);
    const c16 = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      await expect(c16.call('Authorize', {})).rejects.toMatchObject({ rpcErrorCode: 'FormationViolation' });
      await expect(c16.call('CancelReservation', { reservationId: 1 })).rejects.toMatchObject({ rpcErrorCode: 'NotSupported' });
      expect(await c16.call('FirmwareStatusNotification', { status: 'Idle' })).toEqual({});
      expect(await c16.call('DiagnosticsStatusNotification', { status: 'Idle' })).toEqual({});
      // D139: the 1.6 security extension's log and signed-firmware notifications are acknowledged
      expect(await c16.call('LogStatusNotification', { status: 'Uploaded', requestId: 1 })).toEqual({});
      expect(await c16.call('SignedFirmwareStatusNotification', { status: 'Installed', requestId: 1 })).toEqual({});
      // D130: a notification that is not an object cannot be understood; a made-up action adds no metrics series
      await expect(c16.call('FirmwareStatusNotification', 42)).rejects.toMatchObject({ rpcErrorCode: 'FormationViolation' });
      for (let i = 0; i < 3; i++) await expect(c16.call(`Made${i}Up`, {})).rejects.toMatchObject({ rpcErrorCode: 'NotSupported' });
    } finally {
      await c16.close();
    }
    const c201 = await connectCharger(svc, ch, 'ocpp2.0.1');
    try {
      await expect(c201.call('Get15118EVCertificate', {})).rejects.toMatchObject({ rpcErrorCode: 'NotImplemented' });
      expect(await c201.call('NotifyEvent', { generatedAt: '2026-11-22T10:00:00Z', seqNo: 0, eventData: [] })).toEqual({});
      expect(await c201.call('DataTransfer', { vendorId: 'acme' })).toEqual({ status: 'UnknownVendorId' });
    } finally {
      await c201.close();
    }
    const text = await svc.deps.metrics.getSingleMetricAsString('ocpp_messages_total');
    expect(text).toContain('action="other",outcome="not_implemented"');
    expect(text).not.toContain('CancelReservation');
    expect(text).not.toContain('Made0Up');
    // every call is timed from its arrival to its answer; actions the gateway does not handle are one label
    const timed = await svc.deps.metrics.getSingleMetricAsString('ocpp_inbound_call_seconds');
    expect(timed).toMatch(/ocpp_inbound_call_seconds_count\{protocol="ocpp1.6",action="FirmwareStatusNotification"\} [1-9]/);
    expect(timed).toMatch(/ocpp_inbound_call_seconds_count\{protocol="ocpp2.0.1",action="DataTransfer"\} [1-9]/);
    expect(timed).toMatch(/ocpp_inbound_call_seconds_count\{protocol="ocpp2.0.1",action="other"\} [1-9]/);
    expect(timed).not.toContain('Get15118EVCertificate');
  });

  it('answers BootNotification with the registration status the operator set, and reads it back (D164)', async () => {
    const ch = await anOcppCharger(svc, user);
    const read = () => svc.app.inject({ method: 'GET', url: `/admin/chargers/${ch.chargerId}/registration`, headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` } });
    expect((await read()).json()).toEqual({ charger_id: ch.chargerId, registration_status: 'Accepted', boot_answered_at: null });
    const put = await svc.app.inject({
      method: 'PUT',
      url: `/admin/chargers/${ch.chargerId}/registration`,
      headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
      payload: { status: 'Pending' },
    });
    expect(put.json()).toEqual({ charger_id: ch.chargerId, registration_status: 'Pending' });
    const cli = await connectCharger(svc, ch, 'ocpp2.0.1', { boot: false });
    try {
      expect(await cli.call('BootNotification', bootPayload('ocpp2.0.1'))).toMatchObject({ status: 'Pending', interval: 300 });
      // a Pending boot is answered too (the charger may be called from then on, C4.2)
      expect((await read()).json()).toEqual({ charger_id: ch.chargerId, registration_status: 'Pending', boot_answered_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    } finally {
      await cli.close();
    }
    const accepted = await connectCharger(svc, ch, 'ocpp2.0.1', { boot: false });
    try {
      await svc.app.inject({ method: 'PUT', url: `/admin/chargers/${ch.chargerId}/registration`, headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` }, payload: { status: 'Accepted' } });
      expect(await accepted.call('BootNotification', bootPayload('ocpp2.0.1'))).toMatchObject({ status: 'Accepted' });
      const now = await read();
      expect(now.json()).toMatchObject({ registration_status: 'Accepted', boot_answered_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    } finally {
      await accepted.close();
    }
    const unknown = await svc.app.inject({ method: 'GET', url: '/admin/chargers/00000000-0000-4000-8000-000000000000/registration', headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` } });
    expect([unknown.statusCode, unknown.json().error]).toEqual([404, 'charger_not_found']);
  });

  it('takes nothing but BootNotification from a charger it has not accepted (D135)', async () => {
    const admin = { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` };
    const setStatus = (id: string, status: string) => svc.app.inject({ method: 'PUT', url: `/admin/chargers/${id}/registration`, headers: admin, payload: { status } });
    const ch = await anOcppCharger(svc, user);
    await setStatus(ch.chargerId, 'Rejected');
    const c16 = await connectCharger(svc, ch, 'ocpp1.6', { boot: false });
    try {
      // before its boot too: the operator's status when the socket opened
      await expect(c16.call('Authorize', { idTag: 'TAG' })).rejects.toMatchObject({ rpcErrorCode: 'SecurityError' });
      expect(await c16.call('BootNotification', bootPayload('ocpp1.6'))).toMatchObject({ status: 'Rejected' });
      for (const [action, payload] of [
        ['Heartbeat', {}],
        ['StatusNotification', { connectorId: 1, status: 'Available', errorCode: 'NoError' }],
        ['StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: new Date().toISOString() }],
      ] as const) {
        await expect(c16.call(action, payload), action).rejects.toMatchObject({ rpcErrorCode: 'SecurityError' });
      }
      expect(await svc.deps.db.selectFrom('charging_sessions').select('id').where('charger_id', '=', ch.chargerId).execute()).toEqual([]);
      // Pending: a Heartbeat or a status the operator may trigger passes, a transaction does not
      await setStatus(ch.chargerId, 'Pending');
      expect(await c16.call('BootNotification', bootPayload('ocpp1.6'))).toMatchObject({ status: 'Pending' });
      expect(await c16.call('Heartbeat', {})).toHaveProperty('currentTime');
      await expect(c16.call('StartTransaction', { connectorId: 1, idTag: 'TAG', meterStart: 0, timestamp: new Date().toISOString() })).rejects.toMatchObject({
        rpcErrorCode: 'SecurityError',
      });
      // accepted at its next boot: everything is taken again
      await setStatus(ch.chargerId, 'Accepted');
      expect(await c16.call('BootNotification', bootPayload('ocpp1.6'))).toMatchObject({ status: 'Accepted' });
      expect(await c16.call('Authorize', { idTag: 'TAG' })).toMatchObject({ idTagInfo: { status: 'Accepted' } });
    } finally {
      await c16.close();
    }
  });
});
