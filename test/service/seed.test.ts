// C1.7 first start: catalog, demo partner (key + CPO client), demo user (token), demo OCPP charger; once.
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.ts';
import { hashSecret } from '../../src/lib/secrets.ts';
import { DEMO_CHARGER_IDENTITY } from '../../src/domain/platform/seed.ts';
import { createTestService, type TestService } from '../helpers/app.ts';

describe('sandbox seed (C1.7)', () => {
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _e, cb) {
      logLines.push(String(chunk));
      cb();
    },
  });
  let svc: TestService;
  beforeAll(async () => {
    svc = await createTestService({ seed: true, logger: createLogger({ level: 'debug', destination: sink }) });
  });
  afterAll(() => svc?.close());

  it('creates the demo records, writes them to DATA_DIR/demo-credentials.json and logs no secret', async () => {
    const demo = svc.demo!;
    expect(demo).not.toBeNull();
    expect(svc.demoFile).toBe(path.resolve(svc.config.DATA_DIR, 'demo-credentials.json'));
    expect(JSON.parse(fs.readFileSync(svc.demoFile!, 'utf8'))).toEqual(demo);
    expect(fs.statSync(svc.demoFile!).mode & 0o777).toBe(0o600);

    const db = svc.deps.db;
    const key = await db.selectFrom('partner_api_keys').selectAll().where('partner_id', '=', demo.partner.partner_id).executeTakeFirstOrThrow();
    expect(key.key_hash).toBe(hashSecret(demo.partner.api_key));
    expect(demo.partner.api_key).toMatch(/^pk_test_/);
    const client = await db.selectFrom('cpo_clients').selectAll().where('client_id', '=', demo.partner.cpo_client.client_id).executeTakeFirstOrThrow();
    expect(client.secret_hash).toBe(hashSecret(demo.partner.cpo_client.client_secret));
    const token = await db.selectFrom('personal_tokens').selectAll().where('user_id', '=', demo.user.user_id).executeTakeFirstOrThrow();
    expect(token.scopes).toEqual(['chargers:read', 'chargers:write']);
    const charger = await db.selectFrom('chargers').selectAll().where('ocpp_identity', '=', DEMO_CHARGER_IDENTITY).executeTakeFirstOrThrow();
    expect(charger).toMatchObject({
      connection_type: 'ocpp',
      owner_user_id: demo.user.user_id,
      password_hash: hashSecret(demo.charger.ocpp_password),
      nickname: demo.charger.nickname,
    });
    expect(demo.charger.ocpp_endpoint).toMatch(/^ws:\/\/.+\/ocpp\/DEMO-CP-1$/);
    const catalog = await db.selectFrom('catalog_models').select('id').execute();
    expect(catalog.length).toBeGreaterThan(0);

    const logs = logLines.join('');
    for (const secret of [demo.partner.api_key, demo.partner.cpo_client.client_secret, demo.user.token, demo.charger.ocpp_password]) {
      expect(logs).not.toContain(secret);
    }
  });

  it('the demo credentials work', async () => {
    const demo = svc.demo!;
    const t = await svc.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: demo.partner.cpo_client.client_id, client_secret: demo.partner.cpo_client.client_secret },
    });
    expect(t.statusCode).toBe(200);
    // the personal token resolves (a /v1 route would say which credential it takes)
    const { resolveBearer } = await import('../../src/domain/credentials/tokens.ts');
    expect(await resolveBearer(svc.deps, demo.user.token)).toMatchObject({ kind: 'personal', userId: demo.user.user_id });
    expect(await resolveBearer(svc.deps, demo.partner.api_key)).toMatchObject({ kind: 'partner', environment: 'sandbox' });
  });

  it('a second start on the same database does not seed again', async () => {
    const again = await createTestService({ seed: true, db: svc.testDb });
    try {
      expect(again.demo).toBeNull();
      const partners = await svc.deps.db.selectFrom('partners').select('id').execute();
      const chargers = await svc.deps.db.selectFrom('chargers').select('id').execute();
      expect(partners).toHaveLength(1);
      expect(chargers).toHaveLength(1);
    } finally {
      await again.close();
    }
  });

  it('two processes starting at once on an empty database seed it once (a lock)', async () => {
    const a = await createTestService();
    const b = await createTestService({ db: a.testDb });
    try {
      const { seedSandbox } = await import('../../src/domain/platform/seed.ts');
      const results = await Promise.all([seedSandbox(a.deps), seedSandbox(b.deps)]);
      expect(results.filter((r) => r !== null)).toHaveLength(1);
      expect(await a.deps.db.selectFrom('partners').select('id').execute()).toHaveLength(1);
      expect(await a.deps.db.selectFrom('chargers').select('id').execute()).toHaveLength(1);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('production never seeds credentials but loads the catalog', async () => {
    const prod = await createTestService({ seed: true, env: { APP_ENV: 'production' } });
    try {
      expect(prod.demo).toBeNull();
      expect(await prod.deps.db.selectFrom('partners').select('id').execute()).toEqual([]);
      expect((await prod.deps.db.selectFrom('catalog_models').select('id').execute()).length).toBeGreaterThan(0);
      expect(fs.existsSync(`${prod.config.DATA_DIR}/demo-credentials.json`)).toBe(false);
    } finally {
      await prod.close();
    }
  });
});
