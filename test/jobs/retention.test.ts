// C4.12 retention: quarantined OCPP messages older than QUARANTINE_RETENTION_DAYS are deleted by the `retention`
// job, rate-limit counters whose window has ended by `rate-limit-cleanup`; both run on their cron and through
// POST /admin/jobs/:job/run. The retention job also deletes the dashboard's sign-in links and sessions a day after
// they could last be used.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { anOcppCharger } from '../helpers/ocpp-factories.ts';

const DAY = 86_400_000;

describe('retention jobs (C4.12)', () => {
  let svc: TestService;
  const clock = testClock('2026-11-22T10:00:00Z');

  beforeAll(async () => {
    svc = await createTestService({ clock, env: { QUARANTINE_RETENTION_DAYS: '30', RETENTION_CRON: '45 3 * * *' } });
  });
  afterAll(() => svc?.close());

  const run = (job: string) => svc.app.inject({ method: 'POST', url: `/admin/jobs/${job}/run`, headers: bearer(TEST_ADMIN_TOKEN) });

  /** a quarantined message received `ageDays` before the test clock (only received_at matters to retention) */
  async function quarantined(chargerId: string, ageDays: number): Promise<string> {
    const r = await sql<{ id: string }>`
      insert into ocpp_quarantine (charger_id, protocol, action, message_id, payload, reason, received_at)
      values (${chargerId}, 'ocpp1.6', 'MeterValues', ${`m-${ageDays}`}, '{}'::jsonb, 'test', ${new Date(clock().getTime() - ageDays * DAY)})
      returning id`.execute(svc.deps.db);
    return r.rows[0]!.id;
  }

  it('is listed with RETENTION_CRON', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/admin/jobs', headers: bearer(TEST_ADMIN_TOKEN) });
    expect(res.json().jobs).toContainEqual(expect.objectContaining({ name: 'retention', cron: '45 3 * * *' }));
  });

  it('deletes quarantined messages older than QUARANTINE_RETENTION_DAYS and keeps the rest', async () => {
    const user = await aUser(svc.deps);
    const charger = await anOcppCharger(svc, user);
    const old = [await quarantined(charger.chargerId, 31), await quarantined(charger.chargerId, 400)];
    const kept = [await quarantined(charger.chargerId, 29), await quarantined(charger.chargerId, 0)];

    const res = await run('retention');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ok: true,
      job: 'retention',
      result: { quarantine_deleted: 2, quarantine_cutoff: '2026-10-23T10:00:00.000Z', dashboard_links_deleted: 0, dashboard_sessions_deleted: 0, access_tokens_deleted: 0 },
    });
    const list = await svc.app.inject({
      method: 'GET',
      url: `/admin/chargers/${charger.chargerId}/quarantine`,
      headers: bearer(TEST_ADMIN_TOKEN),
    });
    expect(list.statusCode).toBe(200);
    const ids = list.json().messages.map((m: { id: string }) => m.id);
    expect(ids.sort()).toEqual([...kept].sort());
    for (const id of old) expect(ids).not.toContain(id);

    // a second run finds nothing; a month later the kept ones age out too
    expect((await run('retention')).json().result.quarantine_deleted).toBe(0);
    clock.advance(31 * DAY);
    expect((await run('retention')).json().result.quarantine_deleted).toBe(2);
  });

  it('deletes dashboard sign-in links and sessions a day after they could last be used, and keeps the rest', async () => {
    const user = await aUser(svc.deps);
    const at = (hours: number) => new Date(clock().getTime() + hours * 3600_000);
    const link = async (name: string, expiresH: number, usedH: number | null) =>
      (
        await svc.deps.db
          .insertInto('dashboard_sign_in_links')
          .values({ user_id: user.userId, token_hash: `retention-${name}`, expires_at: at(expiresH), used_at: usedH === null ? null : at(usedH) })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    const session = async (name: string, expiresH: number, revokedH: number | null) =>
      (
        await svc.deps.db
          .insertInto('dashboard_sessions')
          .values({ user_id: user.userId, token_hash: `retention-${name}`, csrf_token: 'x', expires_at: at(expiresH), revoked_at: revokedH === null ? null : at(revokedH) })
          .returning('id')
          .executeTakeFirstOrThrow()
      ).id;
    const gone = [await link('expired-2d', -48, null), await link('used-2d', -47.9, -48), await session('expired-2d', -48, null), await session('out-2d', 700, -48)];
    const kept = [
      await link('expired-1h', -1, null), // within the day
      await link('open', 0.2, null),
      await session('expired-1h', -1, null),
      await session('out-1h', 700, -1),
      await session('open', 700, null),
    ];
    const res = await run('retention');
    expect(res.json().result).toMatchObject({ dashboard_links_deleted: 2, dashboard_sessions_deleted: 2 });
    const left = [
      ...(await svc.deps.db.selectFrom('dashboard_sign_in_links').select('id').where('user_id', '=', user.userId).execute()),
      ...(await svc.deps.db.selectFrom('dashboard_sessions').select('id').where('user_id', '=', user.userId).execute()),
    ].map((r) => r.id);
    expect(left.sort()).toEqual([...kept].sort());
    for (const id of gone) expect(left).not.toContain(id);
  });

  it('rate-limit counters are deleted once their window has ended, live ones kept', async () => {
    const now = Date.now();
    await svc.deps.db
      .insertInto('rate_limits')
      .values([
        { key: 'retention-test:ended', count: 3, window_start: new Date(now - 3 * 3600_000), window_ms: 60_000 },
        { key: 'retention-test:live', count: 3, window_start: new Date(now), window_ms: 60_000 },
      ])
      .execute();
    const res = await run('rate-limit-cleanup');
    expect(res.statusCode).toBe(200);
    expect(res.json().result.deleted).toBeGreaterThanOrEqual(1);
    const keys = (await svc.deps.db.selectFrom('rate_limits').select('key').where('key', 'like', 'retention-test:%').execute()).map((r) => r.key);
    expect(keys).toEqual(['retention-test:live']);
  });
});
