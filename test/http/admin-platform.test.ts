// C1.6 admin API (platform part) and the npm run admin CLI over it.
import { sql } from 'kysely';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredRoutes } from '../../src/http/app.ts';
import { hashSecret } from '../../src/lib/secrets.ts';
import { runAdminCli, toRequest } from '../../src/cli/admin.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aUser, bearer } from '../helpers/factories.ts';

const admin = bearer(TEST_ADMIN_TOKEN);

describe('admin API disabled without ADMIN_TOKEN', () => {
  it('every /admin path is 404, existing or not, with or without a token', async () => {
    const svc = await createTestService({ env: { ADMIN_TOKEN: '' } });
    try {
      const adminRoutes = registeredRoutes(svc.app).filter((r) => r.url.startsWith('/admin') && r.method !== 'HEAD');
      expect(adminRoutes.length).toBeGreaterThanOrEqual(7);
      for (const r of [...adminRoutes, { method: 'GET', url: '/admin' }, { method: 'GET', url: '/admin/nothing?x=1' }, { method: 'POST', url: '/%61dmin/users' }]) {
        const url = r.url.replace(/:(\w+)/g, '00000000-0000-4000-8000-000000000000');
        const res = await svc.app.inject({ method: r.method as 'GET', url, headers: admin, payload: r.method === 'GET' ? undefined : {} });
        expect(res.statusCode, `${r.method} ${url}`).toBe(404);
        expect(res.json().error).toBe('not_found');
      }
    } finally {
      await svc.close();
    }
  });
});

describe('admin API (C1.6)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService({ listen: true });
  });
  afterAll(() => svc?.close());

  const post = (url: string, payload?: object, headers = admin) => svc.app.inject({ method: 'POST', url, headers, ...(payload ? { payload } : {}) });

  it('refuses a missing or wrong admin token: 401', async () => {
    expect((await post('/admin/partners', { name: 'x' }, {} as typeof admin)).statusCode).toBe(401);
    expect((await post('/admin/partners', { name: 'x' }, bearer('wrong-token-wrong-token'))).statusCode).toBe(401);
  });

  it('creates a partner, its key (revoking the earlier one) and a CPO client', async () => {
    const p = await post('/admin/partners', { name: 'Laadpaal BV', rolling_days: 14, rolling_cap: 100 });
    expect(p.statusCode).toBe(201);
    const { partner_id } = p.json();
    expect(p.json()).toEqual({ partner_id: expect.any(String), name: 'Laadpaal BV' });
    const row = await svc.deps.db.selectFrom('partners').selectAll().where('id', '=', partner_id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ name: 'Laadpaal BV', rolling_days: 14, rolling_cap: 100 });

    const k1 = await post(`/admin/partners/${partner_id}/api-keys`, {});
    expect(k1.statusCode).toBe(201);
    expect(k1.json().api_key).toMatch(/^pk_test_/);
    const k2 = await post(`/admin/partners/${partner_id}/api-keys`, { legacy_prefix: true });
    expect(k2.json().api_key).toMatch(/^pk_live_/);
    const keys = await svc.deps.db.selectFrom('partner_api_keys').selectAll().where('partner_id', '=', partner_id).orderBy('created_at').execute();
    expect(keys).toHaveLength(2);
    expect(keys.filter((k) => k.revoked_at === null).map((k) => k.key_hash)).toEqual([hashSecret(k2.json().api_key)]);
    expect(keys.every((k) => k.environment === 'sandbox')).toBe(true);

    const c = await post(`/admin/partners/${partner_id}/cpo-clients`, {});
    expect(c.statusCode).toBe(201);
    expect(c.json().scopes).toEqual(['cpo:accounts:write', 'cpo:accounts:read', 'cpo:chargers:write', 'cpo:sessions:write']);
    const narrow = await post(`/admin/partners/${partner_id}/cpo-clients`, { scopes: ['cpo:accounts:read'] });
    const stored = await svc.deps.db.selectFrom('cpo_clients').selectAll().where('client_id', '=', narrow.json().client_id).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ partner_id, scopes: ['cpo:accounts:read'], secret_hash: hashSecret(narrow.json().client_secret) });
    // the client works at the token endpoint
    const t = await svc.app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials', client_id: c.json().client_id, client_secret: c.json().client_secret } });
    expect(t.statusCode).toBe(200);
    // D128: revoked, the client and its token are refused at once; a second revoke answers the same
    const catalog = () => svc.app.inject({ method: 'GET', url: '/v1/catalog/chargers', headers: bearer(t.json().access_token) });
    expect((await catalog()).statusCode).toBe(200);
    const revoked = await post(`/admin/cpo-clients/${c.json().client_id}/revoke`, {});
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toEqual({ client_id: c.json().client_id, revoked_tokens: 1 });
    expect((await catalog()).statusCode).toBe(401);
    const again = await svc.app.inject({ method: 'POST', url: '/oauth/token', payload: { grant_type: 'client_credentials', client_id: c.json().client_id, client_secret: c.json().client_secret } });
    expect(again.statusCode).toBe(401);
    expect(again.json().error).toBe('invalid_client');
    expect((await post(`/admin/cpo-clients/${c.json().client_id}/revoke`, {})).json()).toEqual({ client_id: c.json().client_id, revoked_tokens: 0 });
    const unknown = await post('/admin/cpo-clients/cc_nope/revoke', {});
    expect([unknown.statusCode, unknown.json().error]).toEqual([404, 'cpo_client_not_found']);

    const bad = await post(`/admin/partners/${partner_id}/cpo-clients`, { scopes: ['chargers:read'] });
    expect(bad.statusCode).toBe(400);
    const missing = await post('/admin/partners/00000000-0000-4000-8000-000000000000/api-keys', {});
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toBe('partner_not_found');
  });

  it('creates a user, a personal token, and links an account to its owner', async () => {
    const u = await post('/admin/users', { email: 'Owner@Example.nl', full_name: 'Eigenaar' });
    expect(u.statusCode).toBe(201);
    const { user_id } = u.json();
    const user = await svc.deps.db.selectFrom('users').selectAll().where('id', '=', user_id).executeTakeFirstOrThrow();
    expect(user).toMatchObject({ email: 'Owner@Example.nl', full_name: 'Eigenaar' });

    const t = await post(`/admin/users/${user_id}/api-tokens`, { scopes: ['chargers:read'] });
    expect(t.statusCode).toBe(201);
    expect(t.json().token).toMatch(/^ptk_/);
    const tok = await svc.deps.db.selectFrom('personal_tokens').selectAll().where('user_id', '=', user_id).executeTakeFirstOrThrow();
    expect(tok).toMatchObject({ token_hash: hashSecret(t.json().token), scopes: ['chargers:read'], revoked_at: null });
    expect((await post(`/admin/users/${user_id}/api-tokens`, { scopes: ['cpo:accounts:read'] })).statusCode).toBe(400);

    const account = await svc.deps.db.insertInto('accounts').values({ display_name: 'Thuis' }).returning('id').executeTakeFirstOrThrow();
    const link = await post(`/admin/users/${user_id}/accounts`, { account_id: account.id });
    expect(link.statusCode).toBe(200);
    expect(link.json()).toEqual({ ok: true });
    const linked = await svc.deps.db.selectFrom('accounts').select('owner_user_id').where('id', '=', account.id).executeTakeFirstOrThrow();
    expect(linked.owner_user_id).toBe(user_id);
    const none = await post(`/admin/users/${user_id}/accounts`, { account_id: '00000000-0000-4000-8000-000000000000' });
    expect(none.statusCode).toBe(404);
    expect(none.json().error).toBe('account_not_found');
  });

  it("moving an account to another owner moves the chargers the previous owner registered on it (D127)", async () => {
    const seller = await aUser(svc.deps);
    const buyer = await aUser(svc.deps);
    const account = await svc.deps.db.insertInto('accounts').values({ display_name: 'Huis', owner_user_id: seller.userId }).returning('id').executeTakeFirstOrThrow();
    const onAccount = await svc.deps.db.insertInto('chargers').values({ nickname: 'Oprit', owner_user_id: seller.userId, account_id: account.id }).returning('id').executeTakeFirstOrThrow();
    const own = await svc.deps.db.insertInto('chargers').values({ nickname: 'Elders', owner_user_id: seller.userId }).returning('id').executeTakeFirstOrThrow();
    expect((await post(`/admin/users/${buyer.userId}/accounts`, { account_id: account.id })).statusCode).toBe(200);
    const seen = async (token: string) =>
      ((await svc.app.inject({ method: 'GET', url: '/chargers', headers: bearer(token) })).json().chargers as Array<{ id: string }>).map((c) => c.id).sort();
    expect(await seen(seller.token)).toEqual([own.id]);
    expect(await seen(buyer.token)).toEqual([onAccount.id]);
  });

  it('lists the jobs with their crons', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/admin/jobs', headers: admin });
    expect(res.statusCode).toBe(200);
    expect(res.json().jobs).toContainEqual(expect.objectContaining({ name: 'rate-limit-cleanup', cron: svc.config.RATE_LIMIT_CLEANUP_CRON, running: false }));
  });

  it('runs a job now, and 404 for an unknown job', async () => {
    await svc.deps.db.insertInto('rate_limits').values({ key: 'x:old', count: 1, window_start: new Date(Date.now() - 7200_000), window_ms: 60_000 }).execute();
    const res = await post('/admin/jobs/rate-limit-cleanup/run');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true, job: 'rate-limit-cleanup', result: { deleted: 1 } });
    // D146: the run is what the list shows as the job's last
    const list = await svc.app.inject({ method: 'GET', url: '/admin/jobs', headers: admin });
    const cleanup = list.json().jobs.find((j: { name: string }) => j.name === 'rate-limit-cleanup');
    expect(cleanup).toMatchObject({ running: false, last_run: { trigger: 'admin', outcome: 'ok', result: { deleted: 1 }, error: null } });
    expect(cleanup.last_ok_at).toBe(cleanup.last_run.finished_at);
    const unknown = await post('/admin/jobs/no-such-job/run');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toBe('job_not_found');
  });

  it('D249: a run that fails answers 500 job_failed with the job\'s reason, as its record keeps it', async () => {
    await sql`alter table rate_limits rename to rate_limits_away`.execute(svc.deps.db);
    try {
      const res = await post('/admin/jobs/rate-limit-cleanup/run');
      expect(res.statusCode).toBe(500);
      expect(res.json()).toEqual({ error: 'job_failed', detail: expect.stringMatching(/^Job rate-limit-cleanup failed \(its run is in GET \/admin\/jobs\): .*rate_limits/) });
    } finally {
      await sql`alter table rate_limits_away rename to rate_limits`.execute(svc.deps.db);
    }
    const list = await svc.app.inject({ method: 'GET', url: '/admin/jobs', headers: admin });
    const cleanup = list.json().jobs.find((j: { name: string }) => j.name === 'rate-limit-cleanup');
    expect(cleanup.last_run).toMatchObject({ trigger: 'admin', outcome: 'failed', error: expect.stringContaining('rate_limits') });
  });

  it('the CLI maps commands to admin requests and prints the answer', async () => {
    expect(toRequest(['link-account', 'u1', 'a1'])).toEqual({ method: 'POST', path: '/admin/users/u1/accounts', body: { account_id: 'a1' } });
    expect(toRequest(['revoke-cpo-client', 'cc_1'])).toEqual({ method: 'POST', path: '/admin/cpo-clients/cc_1/revoke' });
    expect(toRequest(['request', 'get', '/admin/outbox'])).toEqual({ method: 'GET', path: '/admin/outbox' });
    expect(toRequest(['list-jobs'])).toEqual({ method: 'GET', path: '/admin/jobs' });
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t) };
    const env = { ADMIN_URL: svc.url, ADMIN_TOKEN: TEST_ADMIN_TOKEN };

    expect(await runAdminCli(['--help'], env, io)).toBe(0);
    expect(out.pop()).toContain('create-partner');
    expect(await runAdminCli(['create-partner', '--name', 'CLI partner'], env, io)).toBe(0);
    const { partner_id } = JSON.parse(out.pop()!);
    expect(await runAdminCli(['create-cpo-client', partner_id, '--scopes', 'cpo:accounts:read,cpo:sessions:write'], env, io)).toBe(0);
    expect(JSON.parse(out.pop()!).scopes).toEqual(['cpo:accounts:read', 'cpo:sessions:write']);
    expect(await runAdminCli(['create-user', '--email', 'cli@ere-owner.nl'], env, io)).toBe(0);
    const { user_id } = JSON.parse(out.pop()!);
    expect(await runAdminCli(['mint-user-token', user_id, '--scopes', 'chargers:read'], env, io)).toBe(0);
    expect(JSON.parse(out.pop()!).token).toMatch(/^ptk_/);
    expect(await runAdminCli(['request', 'POST', '/admin/jobs/rate-limit-cleanup/run'], env, io)).toBe(0);
    expect(JSON.parse(out.pop()!).ok).toBe(true);
    expect(await runAdminCli(['run-job', 'nope'], env, io)).toBe(1);
    expect(err.pop()).toContain('404');
    expect(await runAdminCli(['create-user', '--email', 'x@y.nl'], { ADMIN_URL: svc.url }, io)).toBe(2);
    const partners = await svc.deps.db.selectFrom('partners').select('name').where('name', '=', 'CLI partner').execute();
    expect(partners).toHaveLength(1);
  });

  it('npm run admin works as a process', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/admin.ts', 'create-partner', '--name', 'Spawned partner'], {
      env: { ...process.env, ADMIN_URL: svc.url, ADMIN_TOKEN: TEST_ADMIN_TOKEN },
    });
    expect(JSON.parse(stdout)).toEqual({ partner_id: expect.any(String), name: 'Spawned partner' });
  });
});
