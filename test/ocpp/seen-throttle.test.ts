// C4.8 with the hot-path throttle: last_seen_at is written at most every min(30 s, heartbeat/4) per connection,
// which keeps "online" (a message within 2 heartbeat intervals) true, and a superseded connection still steps aside.
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
  // heartbeat 60 s → last_seen_at written at most every 15 s
  svc = await createTestService({ listen: true, clock, env: { HEARTBEAT_INTERVAL_SECONDS: '60' } });
  user = await aUser(svc.deps);
});
afterAll(() => svc.close());

const liveRow = (id: string) => svc.deps.db.selectFrom('ocpp_chargers').selectAll().where('charger_id', '=', id).executeTakeFirstOrThrow();

async function statusOf(id: string) {
  const res = await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(user.token) });
  return (res.json().chargers as Array<{ id: string; status: string }>).find((c) => c.id === id)!.status;
}

describe('last_seen_at throttle (C4.8)', () => {
  it('skips the write within 15 s of the last one, writes after it, and the charger stays online throughout', async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    try {
      expect((await liveRow(ch.chargerId)).last_seen_at!.toISOString()).toBe('2026-11-22T10:00:00.000Z');
      clock.advance(10_000);
      await cli.call('Heartbeat', {});
      await flushSeen(svc);
      expect((await liveRow(ch.chargerId)).last_seen_at!.toISOString()).toBe('2026-11-22T10:00:00.000Z');
      expect(await statusOf(ch.chargerId)).toBe('online');
      clock.advance(6_000);
      await cli.call('Heartbeat', {});
      await flushSeen(svc);
      expect((await liveRow(ch.chargerId)).last_seen_at!.toISOString()).toBe('2026-11-22T10:00:16.000Z');
      clock.advance(119_000); // 2 × 60 s minus 1 s after the last write
      expect(await statusOf(ch.chargerId)).toBe('online');
      await cli.call('Heartbeat', {});
      await flushSeen(svc);
      expect((await liveRow(ch.chargerId)).last_seen_at!.toISOString()).toBe('2026-11-22T10:02:15.000Z');
    } finally {
      await cli.close();
    }
  });

  it('a connection superseded elsewhere closes itself on its next written message', async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    const gone = new Promise((resolve) => cli.once('close', resolve));
    // another process took the charger over: its row names that process's connection
    await svc.deps.db.updateTable('ocpp_chargers').set({ connection_id: 'conn-elsewhere', instance_id: 'other' }).where('charger_id', '=', ch.chargerId).execute();
    clock.advance(16_000);
    await cli.call('Heartbeat', {}).catch(() => undefined);
    await gone;
    const row = await liveRow(ch.chargerId);
    // the newer connection's state is left alone
    expect(row).toMatchObject({ connection_id: 'conn-elsewhere', instance_id: 'other', connected: true });
  });
});
