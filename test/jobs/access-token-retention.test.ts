// D235: CPO access tokens (one row per POST /oauth/token, an hour's life) are deleted by the `retention` job a day
// after they expired. An expired token already answers 401 like an unknown one, so deleting it changes nothing a
// client sees; a live token keeps working; revoking a client still revokes its live tokens, and only those (D243).
import { type RawBuilder, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/lib/secrets.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('expired CPO access tokens are deleted (D235)', () => {
  let svc: TestService;
  let partner: TestPartner;
  const clock = testClock('2026-11-22T10:00:00Z');

  beforeAll(async () => {
    svc = await createTestService({ clock });
    partner = await aPartner(svc.deps, { scopes: ['cpo:accounts:read'] });
  });
  afterAll(() => svc?.close());

  const runRetention = () => svc.app.inject({ method: 'POST', url: '/admin/jobs/retention/run', headers: bearer(TEST_ADMIN_TOKEN) });

  /** a token as a CPO backend gets one: POST /oauth/token */
  async function issue(): Promise<string> {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: partner.clientId, client_secret: partner.clientSecret },
    });
    expect(res.statusCode).toBe(200);
    return res.json().access_token as string;
  }

  /** what a CPO backend sees when it uses the token: status, body and the headers that could tell the cases apart */
  async function use(token: string) {
    const res = await svc.app.inject({ method: 'GET', url: '/v1/accounts', headers: bearer(token) });
    return { status: res.statusCode, body: res.json(), wwwAuthenticate: res.headers['www-authenticate'], cacheControl: res.headers['cache-control'] };
  }

  const stored = async (tokens: string[]) =>
    (await svc.deps.db.selectFrom('access_tokens').select('token_hash').where('token_hash', 'in', tokens.map(hashSecret)).execute()).length;

  it('deletes tokens a day after they expired, keeps the rest; the answer to a deleted token is the answer to an expired or unknown one', async () => {
    const old = [await issue(), await issue(), await issue()]; // expire at 11:00 on day 0
    clock.advance(DAY);
    const recentlyExpired = await issue(); // expires at 11:00 on day 1
    clock.advance(HOUR + 60_000); // 11:01 on day 1: the old ones expired a day and a minute ago
    const live = await issue();

    const unknown = await use('cat_' + 'A'.repeat(43));
    expect(unknown.status).toBe(401);
    const expiredKept = await use(old[0]!); // expired, its row still there
    expect(expiredKept).toEqual(unknown);
    expect(await use(recentlyExpired)).toEqual(unknown);
    expect((await use(live)).status).toBe(200);

    expect(await stored(old)).toBe(3);
    const res = await runRetention();
    expect(res.statusCode).toBe(200);
    expect(res.json().result).toMatchObject({ access_tokens_deleted: 3 });

    expect(await stored(old)).toBe(0);
    expect(await stored([recentlyExpired, live])).toBe(2); // within the day, and live
    expect(await svc.deps.db.selectFrom('access_tokens').select('id').execute()).toHaveLength(2);

    // deleted, expired-but-kept and unknown: one and the same answer
    for (const t of old) expect(await use(t)).toEqual(unknown);
    expect(await use(recentlyExpired)).toEqual(unknown);
    expect((await use(live)).status).toBe(200);

    // a second run finds nothing; a day and two hours later the other two go too
    expect((await runRetention()).json().result.access_tokens_deleted).toBe(0);
    clock.advance(DAY + 2 * HOUR);
    expect((await runRetention()).json().result.access_tokens_deleted).toBe(2);
    expect(await svc.deps.db.selectFrom('access_tokens').select('id').execute()).toHaveLength(0);
  });

  it('revoking a client still revokes its live tokens (found through the client index), and counts only those', async () => {
    await issue(); // expired by the time of the revocation: nothing to revoke (D243), though its row is still kept
    clock.advance(HOUR + 60_000);
    const live = [await issue(), await issue()];
    expect((await use(live[0]!)).status).toBe(200);
    // the revocation's lookup and the job's delete can use an index (the table is tiny here, so the planner is
    // told not to scan it; without the migration's indexes it has nothing else)
    const plans = await svc.deps.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      const client = await trx.selectFrom('cpo_clients').select('id').where('client_id', '=', partner.clientId).executeTakeFirstOrThrow();
      const explain = async (q: RawBuilder<unknown>) => (await sql<{ 'QUERY PLAN': string }>`explain ${q}`.execute(trx)).rows.map((r) => r['QUERY PLAN']).join('\n');
      return {
        revoke: await explain(sql`update access_tokens set revoked_at = now() where cpo_client_id = ${client.id} and revoked_at is null`),
        expired: await explain(sql`select id from access_tokens where expires_at < ${clock()} limit 5000`),
      };
    });
    expect(plans.revoke).toMatch(/Index Scan[^\n]* (?:using|on) access_tokens_client_unrevoked/);
    expect(plans.expired).toMatch(/Index Scan[^\n]* (?:using|on) access_tokens_expires/);

    const res = await svc.app.inject({ method: 'POST', url: `/admin/cpo-clients/${partner.clientId}/revoke`, headers: bearer(TEST_ADMIN_TOKEN) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ client_id: partner.clientId, revoked_tokens: 2 });
    expect((await use(live[0]!)).status).toBe(401);
    // the expired token's row stays as it was: the retention job deletes it a day after its expiry
    expect(await svc.deps.db.selectFrom('access_tokens').select('id').where('revoked_at', 'is', null).execute()).toHaveLength(1);
  });
});
