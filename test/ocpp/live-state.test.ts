// C4.8 live state: online = socket open AND a message within 2 heartbeat intervals; kept in PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger } from '../helpers/ocpp-factories.ts';
import { flushSeen } from '../helpers/ocpp-factories.ts';

const clock = testClock('2026-11-22T10:00:00Z');
let svc: TestService;
let user: { userId: string; token: string };

beforeAll(async () => {
  svc = await createTestService({ listen: true, clock, env: { HEARTBEAT_INTERVAL_SECONDS: '60' } });
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

async function statusOf(id: string) {
  const res = await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(user.token) });
  return (res.json().chargers as Array<{ id: string; status: string }>).find((c) => c.id === id)!.status;
}

async function gauge(protocol: string): Promise<number> {
  const m = await svc.deps.metrics.getSingleMetric('ocpp_connected_chargers')!.get();
  return m.values.find((v) => v.labels.protocol === protocol)?.value ?? 0;
}

describe('live state (C4.8)', () => {
  it('is online while the socket is open and the charger spoke within 2 heartbeat intervals', async () => {
    const ch = await anOcppCharger(svc, user);
    expect(await statusOf(ch.chargerId)).toBe('offline');
    const cli = await connectCharger(svc, ch, 'ocpp2.0.1');
    try {
      const boot = await svc.deps.db.selectFrom('ocpp_chargers').selectAll().where('charger_id', '=', ch.chargerId).executeTakeFirstOrThrow();
      expect(boot).toMatchObject({ connected: true, protocol: 'ocpp2.0.1', instance_id: expect.any(String) });
      expect(boot.last_seen_at!.toISOString()).toBe('2026-11-22T10:00:00.000Z');
      expect(await statusOf(ch.chargerId)).toBe('online');
      expect(await gauge('ocpp2.0.1')).toBe(1);

      clock.advance(121_000); // more than 2 × 60 s of silence
      expect(await statusOf(ch.chargerId)).toBe('offline');
      expect(await cli.call('Heartbeat', {})).toEqual({ currentTime: '2026-11-22T10:02:01Z' });
      await flushSeen(svc); // last_seen_at notes are written every 250 ms
      expect(await statusOf(ch.chargerId)).toBe('online');
    } finally {
      await cli.close();
    }
    for (let i = 0; i < 100 && (await statusOf(ch.chargerId)) !== 'offline'; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await statusOf(ch.chargerId)).toBe('offline');
    expect(await gauge('ocpp2.0.1')).toBe(0);
  });

  it('answers a command the charger refuses with a CALLERROR as 502 charger_call_error', async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      const res = await svc.app.inject({
        method: 'POST',
        url: `/admin/chargers/${ch.chargerId}/commands`,
        headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
        payload: { action: 'ChangeConfiguration', payload: { key: 'HeartbeatInterval', value: '60' } },
      });
      expect(res.statusCode).toBe(502);
      expect(res.json()).toMatchObject({ error: 'charger_call_error', detail: expect.stringContaining('NotImplemented') });
    } finally {
      await cli.close();
    }
  });

  it('deletes week-old command rows through the ocpp-commands-cleanup job', async () => {
    const ch = await anOcppCharger(svc, user);
    const mk = (created_at: Date) =>
      svc.deps.db.insertInto('ocpp_commands').values({ charger_id: ch.chargerId, instance_id: 'gone', action: 'Reset', payload: '{}', created_at }).execute();
    await mk(new Date(clock().getTime() - 8 * 24 * 3_600_000));
    await mk(new Date(clock().getTime() - 2 * 3_600_000));
    const res = await svc.app.inject({ method: 'POST', url: '/admin/jobs/ocpp-commands-cleanup/run', headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` } });
    expect(res.statusCode).toBe(200);
    const rows = await svc.deps.db.selectFrom('ocpp_commands').select(['status']).where('charger_id', '=', ch.chargerId).execute();
    expect(rows).toEqual([{ status: 'timeout' }]);
  });
});
