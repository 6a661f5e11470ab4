// C6.6 remote commands: sent in the charger's own protocol, its answer comes back; 409 offline, 504 timeout,
// 400 for an action its protocol lacks; a second process on the same database delivers through ocpp_commands.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, flushSeen } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let other: TestService;
let user: { userId: string; token: string };
const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

beforeAll(async () => {
  svc = await createTestService({ listen: true, env: { OCPP_CALL_TIMEOUT_SECONDS: '1' } });
  // a second process (instance) on the same database, holding no sockets
  other = await createTestService({ listen: true, db: svc.testDb, env: { OCPP_CALL_TIMEOUT_SECONDS: '1' } });
  user = await aUser(svc.deps);
});
afterAll(async () => {
  await other.close();
  await svc.close();
});

const command = (s: TestService, chargerId: string, action: string, payload: unknown = {}) =>
  s.app.inject({ method: 'POST', url: `/admin/chargers/${chargerId}/commands`, headers: admin, payload: { action, payload } });

describe('POST /admin/chargers/:charger_id/commands', () => {
  it('sends Reset to a 1.6 charger and answers its response', async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    const seen: unknown[] = [];
    cli.handle('Reset', async ({ params }) => {
      seen.push(params);
      return { status: 'Accepted' };
    });
    try {
      const res = await command(svc, ch.chargerId, 'Reset', { type: 'Soft' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ok: true, action: 'Reset', response: { status: 'Accepted' } });
      expect(seen).toEqual([{ type: 'Soft' }]);
      const rows = await svc.deps.db.selectFrom('ocpp_commands').selectAll().where('charger_id', '=', ch.chargerId).execute();
      expect(rows).toMatchObject([{ action: 'Reset', status: 'answered', response: { status: 'Accepted' } }]);
      const latency = await svc.deps.metrics.getSingleMetricAsString('ocpp_call_duration_seconds');
      expect(latency).toContain('ocpp_call_duration_seconds_count{protocol="ocpp1.6",action="Reset",outcome="answered"} 1');
    } finally {
      await cli.close();
    }
  });

  it('sends GetVariables to a 2.0.1 charger; refuses an action or payload its protocol lacks', async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp2.0.1');
    const answer = { getVariableResult: [{ attributeStatus: 'Accepted', attributeValue: '300', component: { name: 'OCPPCommCtrlr' }, variable: { name: 'HeartbeatInterval' } }] };
    cli.handle('GetVariables', async () => answer);
    try {
      const res = await command(svc, ch.chargerId, 'GetVariables', { getVariableData: [{ component: { name: 'OCPPCommCtrlr' }, variable: { name: 'HeartbeatInterval' } }] });
      expect(res.json()).toEqual({ ok: true, action: 'GetVariables', response: answer });
      const wrong = await command(svc, ch.chargerId, 'GetConfiguration', {});
      expect(wrong.statusCode).toBe(400);
      expect(wrong.json()).toMatchObject({ error: 'invalid_request', detail: expect.stringContaining('ocpp2.0.1') });
      const bad = await command(svc, ch.chargerId, 'Reset', { type: 'Sideways' });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().error).toBe('invalid_request');
    } finally {
      await cli.close();
    }
  });

  it('delivers a command through PostgreSQL when another process holds the socket', async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    cli.handle('GetConfiguration', async () => ({ configurationKey: [{ key: 'HeartbeatInterval', readonly: false, value: '300' }] }));
    try {
      const res = await command(other, ch.chargerId, 'GetConfiguration', { key: ['HeartbeatInterval'] });
      expect(res.statusCode).toBe(200);
      expect(res.json().response.configurationKey[0].value).toBe('300');
    } finally {
      await cli.close();
    }
  });

  it('closes the older socket when a newer connection of the charger lands on another process', async () => {
    const ch = await anOcppCharger(svc, user);
    const older = await connectCharger(svc, ch, 'ocpp1.6');
    // the older socket has nothing left to write (its last_seen note is written): only the newer connection's
    // announcement on the event bus can tell its process to close it (the full sweep runs every 60 s)
    await flushSeen(svc);
    const gone = new Promise((resolve) => older.once('close', resolve));
    const newer = await connectCharger(other, ch, 'ocpp1.6');
    try {
      await gone;
      expect(await newer.call('Heartbeat', {})).toHaveProperty('currentTime');
      const st = await svc.deps.db.selectFrom('ocpp_chargers').selectAll().where('charger_id', '=', ch.chargerId).executeTakeFirstOrThrow();
      expect(st).toMatchObject({ connected: true, instance_id: other.deps.ocpp!.instanceId });
    } finally {
      await newer.close();
    }
  });

  it('answers 504 charger_timeout when the charger does not answer in time', async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    cli.handle('TriggerMessage', () => new Promise(() => {}));
    try {
      const res = await command(svc, ch.chargerId, 'TriggerMessage', { requestedMessage: 'Heartbeat' });
      expect(res.statusCode).toBe(504);
      expect(res.json()).toMatchObject({ error: 'charger_timeout' });
      const [row] = await svc.deps.db.selectFrom('ocpp_commands').selectAll().where('charger_id', '=', ch.chargerId).execute();
      expect(row).toMatchObject({ status: 'timeout', error: 'charger_timeout' });
    } finally {
      await cli.close({ force: true }); // its handler never settles
    }
  });

  it('answers 504 charger_timeout, outcome unknown, when the socket closes after the call went out (D123)', async () => {
    for (const how of ['the charger drops it', 'a newer connection replaces it'] as const) {
      const ch = await anOcppCharger(svc, user);
      const cli = await connectCharger(svc, ch, 'ocpp1.6');
      let newer: Awaited<ReturnType<typeof connectCharger>> | undefined;
      const received = new Promise<void>((r) =>
        cli.handle('RemoteStartTransaction', () => {
          r();
          return new Promise(() => {}); // it may have started: the answer never comes
        }),
      );
      const res = command(svc, ch.chargerId, 'RemoteStartTransaction', { idTag: 'X1' });
      await received;
      if (how === 'the charger drops it') await cli.close({ force: true });
      else newer = await connectCharger(svc, ch, 'ocpp1.6');
      try {
        const r = await res;
        expect(r.statusCode, how).toBe(504);
        expect(r.json(), how).toEqual({ error: 'charger_timeout', detail: expect.stringContaining('the outcome is unknown') });
        const [row] = await svc.deps.db.selectFrom('ocpp_commands').selectAll().where('charger_id', '=', ch.chargerId).execute();
        expect(row, how).toMatchObject({ status: 'timeout', error: 'connection_lost' });
      } finally {
        await cli.close({ force: true });
        await newer?.close();
      }
    }
  });

  it("answers 502 when the charger's answer does not follow the protocol's schema (D136)", async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    const answers: Array<Record<string, unknown>> = [{ status: 'Bogus' }, {}, { status: 'Accepted' }];
    cli.handle('Reset', async () => answers.shift()!);
    try {
      for (const bad of ['Bogus', 'missing']) {
        const res = await command(svc, ch.chargerId, 'Reset', { type: 'Soft' });
        expect(res.statusCode, bad).toBe(502);
        expect(res.json(), bad).toEqual({ error: 'charger_call_error', detail: expect.stringContaining('does not follow the OCPP schema') });
      }
      const ok = await command(svc, ch.chargerId, 'Reset', { type: 'Soft' });
      expect(ok.json()).toEqual({ ok: true, action: 'Reset', response: { status: 'Accepted' } });
      const rows = await svc.deps.db.selectFrom('ocpp_commands').select(['status', 'error']).where('charger_id', '=', ch.chargerId).orderBy('created_at').execute();
      expect(rows.map((r) => r.status)).toEqual(['failed', 'failed', 'answered']);
    } finally {
      await cli.close();
    }
  });

  it('answers 409 charger_offline for a charger without a socket or before its BootNotification; 404 for an unknown one', async () => {
    const ch = await anOcppCharger(svc, user);
    const res = await command(svc, ch.chargerId, 'Reset', { type: 'Hard' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: 'charger_offline' });
    const fresh = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, fresh, 'ocpp1.6', { boot: false });
    try {
      await cli.call('Heartbeat', {});
      const early = await command(svc, fresh.chargerId, 'Reset', { type: 'Hard' });
      expect(early.statusCode).toBe(409);
      expect(early.json().detail).toContain('BootNotification');
    } finally {
      await cli.close();
    }
    const unknown = await command(svc, '00000000-0000-4000-8000-000000000000', 'Reset', { type: 'Hard' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toBe('charger_not_found');
  });
});
