// Production mode (C2.7): the EAN register decides matched / 422 mismatch / unverified (new build), Dutch EANs
// only, the GS1 check digit, the weekly re-check job; the HTTP register adapter against a fake register.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService, TEST_ADMIN_TOKEN } from '../helpers/app.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { accountBody, anAccount, anEan, anEligibleAccount, inEanRegister } from '../helpers/onboarding-factories.ts';
import { gs1CheckDigit } from '../../src/domain/ean/ean.ts';
import { eanRecheckJob } from '../../src/jobs/ean-recheck.job.ts';

const withCheckDigit = (first17: string) => first17 + String(gs1CheckDigit(first17));

describe('production: table-backed EAN register', () => {
  let svc: TestService;
  let partner: TestPartner;
  let token: string;

  beforeAll(async () => {
    svc = await createTestService({ env: { APP_ENV: 'production' } });
    partner = await aPartner(svc.deps);
    token = await partner.cpoToken();
  });
  afterAll(() => svc.close());

  const post = (payload: unknown) => svc.app.inject({ method: 'POST', url: '/v1/accounts', headers: bearer(token), payload: payload as object });
  const conn = (id: string) => svc.deps.db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const refCount = async (ref: string) => (await svc.deps.db.selectFrom('accounts').select('id').where('cpo_external_ref', '=', ref).execute()).length;

  it('POST /admin/ean-register loads entries (201 {loaded})', async () => {
    const ean = anEan();
    const res = await svc.app.inject({
      method: 'POST',
      url: '/admin/ean-register',
      headers: bearer(TEST_ADMIN_TOKEN),
      payload: { entries: [{ ean_code: ean, postal_code: '1011 ab', house_number: 5, house_number_addition: 'a' }] },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({ loaded: 1 });
    const row = await svc.deps.db.selectFrom('ean_register_entries').selectAll().where('ean_code', '=', ean).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ postal_code: '1011AB', house_number: '5', house_number_addition: 'A' });
  });

  it('matched: the register lists the EAN at this address', async () => {
    const body = accountBody({ connection: { house_number: '12', house_number_addition: 'bis' } });
    const c = body.connection as { ean_code: string };
    await inEanRegister(svc, c.ean_code, { postal_code: '3511AB', house_number: '12', house_number_addition: 'BIS' });
    const res = await post(body);
    expect(res.statusCode).toBe(201);
    expect(res.json().ean_validation_status).toBe('matched');
    expect((await conn(res.json().connection_id)).ean_validation_status).toBe('matched');
  });

  it('422 ean_address_mismatch when the register lists the EAN at another address; nothing stored', async () => {
    const body = accountBody();
    const c = body.connection as { ean_code: string };
    await inEanRegister(svc, c.ean_code, { postal_code: '9999ZZ', house_number: '1' });
    const res = await post(body);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({ error: 'ean_address_mismatch', detail: expect.any(String) });
    expect(await refCount(body.cpo_external_ref as string)).toBe(0);
  });

  it('422 ean_address_mismatch when the register lists another EAN at this address', async () => {
    const body = accountBody({ connection: { postal_code: '2500 AA', house_number: '77' } });
    await inEanRegister(svc, anEan(), { postal_code: '2500AA', house_number: '77' });
    const res = await post(body);
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('ean_address_mismatch');
  });

  it('unverified: unknown EAN at a new-build address is accepted and queued', async () => {
    const res = await post(accountBody({ connection: { postal_code: '1234 NB', house_number: '1' } }));
    expect(res.statusCode).toBe(201);
    expect(res.json().ean_validation_status).toBe('unverified');
  });

  it('422 ean_not_dutch for an EAN that does not start with 871', async () => {
    const body = accountBody({ connection: { ean_code: withCheckDigit('54141234567890123') } });
    const res = await post(body);
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({ error: 'ean_not_dutch', detail: expect.any(String) });
    expect(await refCount(body.cpo_external_ref as string)).toBe(0);
  });

  it('400 invalid_ean for a wrong GS1 check digit (production only)', async () => {
    const good = anEan();
    const bad = good.slice(0, 17) + String((Number(good[17]) + 1) % 10);
    const res = await post(accountBody({ connection: { ean_code: bad } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_ean', detail: expect.stringMatching(/check digit/) });
  });

  it('connections:update re-validates against the register (422 mismatch, unverified for a new build)', async () => {
    const a = await anAccount(svc, partner, { connection: { postal_code: '4000 AB', house_number: '3' } });
    const elsewhere = anEan();
    await inEanRegister(svc, elsewhere, { postal_code: '4000AB', house_number: '999' });
    const r1 = await svc.app.inject({ method: 'POST', url: '/v1/connections:update', headers: bearer(token), payload: { connection_id: a.connection_id, connection: { ean_code: elsewhere } } });
    expect(r1.statusCode).toBe(422);
    expect(r1.json().error).toBe('ean_address_mismatch');
    const r2 = await svc.app.inject({ method: 'POST', url: '/v1/connections:update', headers: bearer(token), payload: { connection_id: a.connection_id, connection: { ean_code: withCheckDigit('54100000000000001') } } });
    expect(r2.json().error).toBe('ean_not_dutch');
    expect((await conn(a.connection_id)).ean_code).toBe(a.ean_code);
  });

  it('the ean-recheck job moves unverified connections to matched or mismatched (POST /admin/jobs/ean-recheck/run)', async () => {
    const confirm = await anAccount(svc, partner, { connection: { postal_code: '5000 AA', house_number: '1' } });
    const contradict = await anAccount(svc, partner, { connection: { postal_code: '5000 AA', house_number: '2' } });
    const still = await anAccount(svc, partner, { connection: { postal_code: '5000 AA', house_number: '3' } });
    for (const a of [confirm, contradict, still]) expect((await conn(a.connection_id)).ean_validation_status).toBe('unverified');
    await inEanRegister(svc, confirm.ean_code, { postal_code: '5000AA', house_number: '1' });
    await inEanRegister(svc, anEan(), { postal_code: '5000AA', house_number: '2' });
    const res = await svc.app.inject({ method: 'POST', url: '/admin/jobs/ean-recheck/run', headers: bearer(TEST_ADMIN_TOKEN) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, job: 'ean-recheck', result: { matched: 1, mismatched: 1, failed: 0 } });
    expect((await conn(confirm.connection_id)).ean_validation_status).toBe('matched');
    expect((await conn(contradict.connection_id)).ean_validation_status).toBe('mismatched');
    expect((await conn(still.connection_id)).ean_validation_status).toBe('unverified');
    expect(eanRecheckJob.cron(svc.deps.config)).toBe('0 3 * * 1');
  });

  it('C2.8: an unverified connection keeps the account ineligible until the re-check confirms the EAN', async () => {
    const { aSignedMandate, aCpoCharger } = await import('../helpers/onboarding-factories.ts');
    const { isAccountEreEligible } = await import('../../src/domain/accounts/eligibility.ts');
    const a = await anAccount(svc, partner, { connection: { postal_code: '7000 AA', house_number: '8' } });
    await aSignedMandate(svc, a.connection_id);
    const ch = await aCpoCharger(svc, partner, a.account_id);
    expect(ch.account_ere_eligible).toBe(false);
    await inEanRegister(svc, a.ean_code, { postal_code: '7000AA', house_number: '8' });
    await eanRecheckJob.run(svc.deps);
    expect((await conn(a.connection_id)).ean_validation_status).toBe('matched');
    expect(await isAccountEreEligible(svc.deps.db, a.account_id)).toBe(true);
  });

  it('anEligibleAccount works on production (register entry first)', async () => {
    const e = await anEligibleAccount(svc, partner);
    expect((await conn(e.connection_id)).ean_validation_status).toBe('matched');
  });

  it('the sandbox helpers are 404 on production', async () => {
    const a = await anAccount(svc, partner, { connection: { postal_code: '6000 AA', house_number: '1' } });
    const res = await svc.app.inject({ method: 'POST', url: `/sandbox/connections/${a.connection_id}/sign-mandate`, headers: bearer(token), payload: {} });
    expect(res.statusCode).toBe(404);
    const re = await svc.app.inject({ method: 'POST', url: '/sandbox/ean-recheck', headers: bearer(token), payload: {} });
    expect(re.statusCode).toBe(404);
    expect((await conn(a.connection_id)).mandate_status).toBe('pending');
  });
});

describe('production: HTTP EAN register adapter (EAN_REGISTER_URL)', () => {
  const KNOWN = withCheckDigit('87100000000000001');
  const OTHER = withCheckDigit('87100000000000002');
  const entries = [
    { ean_code: KNOWN, postal_code: '1111AA', house_number: '1', house_number_addition: null },
    { ean_code: OTHER, postal_code: '2222BB', house_number: '2', house_number_addition: null },
  ];
  let fail = false;
  const seen: string[] = [];
  let server: http.Server;
  let svc: TestService;
  let partner: TestPartner;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      if (fail) return void res.writeHead(503).end();
      const u = new URL(req.url!.replace(/^\/api/, ''), 'http://x');
      const m = /^\/connections\/(\d{18})$/.exec(u.pathname);
      res.setHeader('content-type', 'application/json');
      if (m) {
        const e = entries.find((x) => x.ean_code === m[1]);
        return void (e ? res.end(JSON.stringify(e)) : res.writeHead(404).end('{}'));
      }
      if (u.pathname === '/connections') {
        const pc = u.searchParams.get('postal_code');
        const hn = u.searchParams.get('house_number');
        return void res.end(JSON.stringify({ connections: entries.filter((e) => e.postal_code === pc && e.house_number === hn) }));
      }
      res.writeHead(404).end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    svc = await createTestService({ env: { APP_ENV: 'production', EAN_REGISTER_URL: `http://127.0.0.1:${port}/api`, EAN_REGISTER_TOKEN: 'reg-secret' } });
    partner = await aPartner(svc.deps);
  });
  afterAll(async () => {
    await svc.close();
    await new Promise((r) => server.close(r));
  });

  const post = async (connection: Record<string, unknown>) =>
    svc.app.inject({ method: 'POST', url: '/v1/accounts', headers: bearer(await partner.cpoToken()), payload: accountBody({ connection }) });

  it('matched, mismatched and unverified through the HTTP register, with the bearer token', async () => {
    const ok = await post({ ean_code: KNOWN, postal_code: '1111 aa', house_number: '1' });
    expect(ok.statusCode).toBe(201);
    expect(ok.json().ean_validation_status).toBe('matched');
    expect(seen.some((s) => s.startsWith(`GET /api/connections/${KNOWN} Bearer reg-secret`))).toBe(true);
    const mismatch = await post({ ean_code: anEan(), postal_code: '2222BB', house_number: '2' });
    expect(mismatch.statusCode).toBe(422);
    expect(mismatch.json().error).toBe('ean_address_mismatch');
    const newBuild = await post({ ean_code: anEan(), postal_code: '3333CC', house_number: '3' });
    expect(newBuild.statusCode).toBe(201);
    expect(newBuild.json().ean_validation_status).toBe('unverified');
  });

  it('an unavailable register leaves the connection unverified; the re-check counts it as failed', async () => {
    fail = true;
    try {
      const res = await post({ ean_code: anEan(), postal_code: '4444DD', house_number: '4' });
      expect(res.statusCode).toBe(201);
      expect(res.json().ean_validation_status).toBe('unverified');
      const run = await eanRecheckJob.run(svc.deps);
      expect(run).toMatchObject({ failed: 2, matched: 0, mismatched: 0 });
    } finally {
      fail = false;
    }
  });
});
