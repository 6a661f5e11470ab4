// Issue 12 item 6 (C2.6, D28), end to end over HTTP as a CPO backend drives the sandbox: token, account, signing
// link, the sandbox signs as the customer would (the link shows signed), a correction with
// acknowledge_mandate_lapses revokes the machtiging and voids the link (its page says so, it signs nothing), the
// next POST /v1/mandate-links answers 201 with a new link, and signing that one makes the machtiging active again.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb } from '../../src/db/database.ts';
import { listMigrationFiles, migrate, MIGRATIONS_DIR } from '../../src/db/migrate.ts';
import { withDatabase } from '../helpers/global-setup.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { accountBody, anEan } from '../helpers/onboarding-factories.ts';

const pathOf = (url: string) => new URL(url).pathname + new URL(url).search;
const hidden = (html: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';

describe('the sandbox re-signing flow (C2.6)', () => {
  let svc: TestService;
  let partner: TestPartner;
  const clock = testClock('2026-11-22T10:00:00Z');

  beforeAll(async () => {
    svc = await createTestService({ clock });
    partner = await aPartner(svc.deps);
  });
  afterAll(() => svc.close());

  /** POST /oauth/token with the client's credentials, as the CPO backend does */
  async function cpoToken(): Promise<string> {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/oauth/token',
      payload: { grant_type: 'client_credentials', client_id: partner.clientId, client_secret: partner.clientSecret },
    });
    expect(res.statusCode).toBe(200);
    return res.json().access_token;
  }

  const api = (token: string, url: string, payload: object) => svc.app.inject({ method: 'POST', url, headers: bearer(token), payload });
  const page = (url: string, locale?: 'en') => svc.app.inject({ method: 'GET', url: pathOf(url) + (locale ? '?locale=en' : '') });
  const signOnPage = async (url: string, name: string) => {
    const shown = await page(url);
    return svc.app.inject({
      method: 'POST',
      url: pathOf(url),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ full_name: name, consent: 'yes', clause_sha256: hidden(shown.body, 'clause_sha256') }).toString(),
    });
  };
  const connectionOf = async (token: string, ref: string) => {
    const res = await svc.app.inject({ method: 'GET', url: `/v1/accounts?cpo_external_ref=${ref}`, headers: bearer(token) });
    expect(res.statusCode).toBe(200);
    return res.json().accounts[0].connections[0];
  };
  const mandatesOf = (connectionId: string) =>
    svc.deps.db.selectFrom('mandates').select(['status', 'ean_code', 'mandate_link_id', 'channel']).where('connection_id', '=', connectionId).orderBy('signed_at').execute();

  async function anAccountWithLink(token: string) {
    const body = accountBody();
    const acc = await api(token, '/v1/accounts', body);
    expect(acc.statusCode).toBe(201);
    const { account_id, connection_id } = acc.json();
    const first = await api(token, '/v1/mandate-links', { connection_id });
    expect(first.statusCode).toBe(201);
    return { account_id, connection_id, ref: body.cpo_external_ref as string, ean: (body.connection as { ean_code: string }).ean_code, link: first.json() };
  }

  it('sandbox sign → the link shows signed; revoke → the link is void; the next POST /v1/mandate-links is 201 with a new link; signing it makes the machtiging active', async () => {
    const token = await cpoToken();
    const { connection_id, ref, ean, link: first } = await anAccountWithLink(token);
    expect(first).toMatchObject({ connection_id, mandate_status: 'pending' });
    const before = await page(first.url);
    expect(before.statusCode).toBe(200);
    expect(before.body).toContain('name="clause_sha256"');

    // the sandbox signs as the customer would: the open link is the one signed
    clock.advance(60_000);
    const signed = await api(token, `/sandbox/connections/${connection_id}/sign-mandate`, { full_name: 'Jan de Vries' });
    expect(signed.statusCode).toBe(200);
    expect(signed.json()).toMatchObject({ mandate_status: 'active', registration_status: 'ingediend', mandate_valid_from: '2026-11-22T10:01:00Z' });
    const afterSign = await page(first.url);
    expect(afterSign.statusCode).toBe(200);
    expect(afterSign.body).toContain('Machtiging ondertekend');
    expect(afterSign.body).toContain('22 november 2026, 11:01 (CET, Europe/Amsterdam)'); // C7.3: Amsterdam time, the zone named
    expect(afterSign.body).not.toContain('name="clause_sha256"');
    // the link cannot be signed a second time, and no second link is issued while the machtiging is active
    expect((await signOnPage(first.url, 'Iemand Anders')).body).toContain('Machtiging ondertekend');
    expect((await api(token, '/v1/mandate-links', { connection_id })).json()).toEqual({ error: 'mandate_already_active', detail: expect.any(String) });
    expect(await mandatesOf(connection_id)).toEqual([{ status: 'active', ean_code: ean, mandate_link_id: first.mandate_link_id, channel: 'sandbox_helper' }]);
    expect(await connectionOf(token, ref)).toMatchObject({ mandate_status: 'active', registration_status: 'ingediend' });

    // a correction with acknowledge_mandate_lapses revokes the machtiging and voids the link
    clock.advance(60_000);
    const corrected = anEan();
    const revoke = await api(token, '/v1/connections:update', { connection_id, connection: { ean_code: corrected }, acknowledge_mandate_lapses: true });
    expect(revoke.statusCode).toBe(200);
    expect(revoke.json()).toMatchObject({ changed: true, mandate_revoked: true, mandate_status: 'pending', registration_status: 'concept' });
    const voidPage = await page(first.url);
    expect(voidPage.statusCode).toBe(410);
    expect(voidPage.body).toContain('Link vervallen');
    expect((await page(first.url, 'en')).body).toContain('Link void');
    const late = await signOnPage(first.url, 'Jan de Vries');
    expect(late.statusCode).toBe(410);
    expect(await connectionOf(token, ref)).toMatchObject({ mandate_status: 'pending', registration_status: 'concept', mandate_valid_from: null });

    // the next POST answers 201 with a new link, which then comes back idempotently
    const second = await api(token, '/v1/mandate-links', { connection_id });
    expect(second.statusCode).toBe(201);
    const next = second.json();
    expect(next).toMatchObject({ ok: true, connection_id, mandate_status: 'pending', expires_at: '2026-12-22T10:02:00Z' });
    expect(next.idempotent).toBeUndefined();
    expect(next.mandate_link_id).not.toBe(first.mandate_link_id);
    expect(next.url).not.toBe(first.url);
    const again = await api(token, '/v1/mandate-links', { connection_id });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ ...next, idempotent: true });
    const form = await page(next.url);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain(corrected);
    expect(form.body).not.toContain(ean);

    // signing the new link (sandbox) makes the machtiging active again, for the corrected EAN
    clock.advance(60_000);
    const resigned = await api(token, `/sandbox/connections/${connection_id}/sign-mandate`, {});
    expect(resigned.statusCode).toBe(200);
    expect(resigned.json()).toMatchObject({ mandate_status: 'active', mandate_valid_from: '2026-11-22T10:03:00Z' });
    expect((await page(next.url)).body).toContain('Machtiging ondertekend');
    expect((await page(first.url)).statusCode).toBe(410);
    expect(await connectionOf(token, ref)).toMatchObject({ mandate_status: 'active', registration_status: 'ingediend', mandate_valid_from: '2026-11-22T10:03:00Z' });
    expect(await mandatesOf(connection_id)).toEqual([
      { status: 'revoked', ean_code: ean, mandate_link_id: first.mandate_link_id, channel: 'sandbox_helper' },
      { status: 'active', ean_code: corrected, mandate_link_id: next.mandate_link_id, channel: 'sandbox_helper' },
    ]);
  });

  it('the same flow signed by the customer on the page: the revoked link is void, the new one signs', async () => {
    const token = await cpoToken();
    const { connection_id, ref, link: first } = await anAccountWithLink(token);
    expect((await signOnPage(first.url, 'Jan de Vries')).statusCode).toBe(200);
    const revoke = await api(token, '/v1/connections:update', { connection_id, connection: { city: 'Houten' }, acknowledge_mandate_lapses: true });
    expect(revoke.json()).toMatchObject({ mandate_revoked: true });
    expect((await page(first.url)).statusCode).toBe(410);
    const second = await api(token, '/v1/mandate-links', { connection_id });
    expect(second.statusCode).toBe(201);
    const signed = await signOnPage(second.json().url, 'Jan de Vries');
    expect(signed.statusCode).toBe(200);
    expect(signed.body).toContain('Machtiging ondertekend');
    const signedFor = await svc.deps.db.selectFrom('mandates').select('address').where('connection_id', '=', connection_id).where('status', '=', 'active').executeTakeFirstOrThrow();
    expect(signedFor.address).toContain('Houten');
    expect(await connectionOf(token, ref)).toMatchObject({ mandate_status: 'active', registration_status: 'ingediend' });
    expect((await mandatesOf(connection_id)).map((m) => [m.status, m.channel])).toEqual([
      ['revoked', 'signing_page'],
      ['active', 'signing_page'],
    ]);
  });

  it('a correction that revokes nothing (no machtiging signed) leaves the open link usable', async () => {
    const token = await cpoToken();
    const { connection_id, link: first } = await anAccountWithLink(token);
    const res = await api(token, '/v1/connections:update', { connection_id, connection: { city: 'Houten' }, acknowledge_mandate_lapses: true });
    expect(res.json()).toMatchObject({ changed: true, mandate_revoked: false });
    const form = await page(first.url);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('Houten');
    expect((await api(token, '/v1/mandate-links', { connection_id })).statusCode).toBe(200);
  });
});

// Migration 0058 voids, in existing data, the links of machtigingen revoked before voided_at existed.
describe.runIf(!!process.env.DATABASE_URL)('migration 0058 on existing links', () => {
  it('links issued before a revocation are void from that revocation; later links and untouched connections stay open', async () => {
    const base = process.env.DATABASE_URL!;
    const name = `ere_mig_${crypto.randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`create database ${name}`);
    const before = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-mig-'));
    // the schema just before this migration: all the other migrations
    for (const f of listMigrationFiles().filter((f) => f !== '0058_mandate_link_voided.sql')) fs.copyFileSync(path.join(MIGRATIONS_DIR, f), path.join(before, f));
    const h = await createDb({ DATABASE_URL: withDatabase(base, name) });
    try {
      await migrate(h.db, before);
      const q = async (text: string) => (await sql.raw<{ id: string }>(text).execute(h.db)).rows;
      const [acc] = await q(`insert into accounts (display_name) values ('Legacy') returning id`);
      const conn = async (ean: string) =>
        (await q(`insert into connections (account_id, ean_code, street, house_number, postal_code, city) values ('${acc!.id}', '${ean}', 'Dorpsstraat', '1', '1234AB', 'Utrecht') returning id`))[0]!.id;
      const link = async (c: string, created: string, signed: string | null = null) =>
        (await q(`insert into mandate_links (connection_id, token_hash, token_encrypted, clause_version, expires_at, signed_at, created_at)
                  values ('${c}', '${crypto.randomBytes(16).toString('hex')}', 'x', 'v1', '2027-01-01Z', ${signed ? `'${signed}'` : 'null'}, '${created}') returning id`))[0]!.id;
      const revoked = await conn('871000000000000011');
      const untouched = await conn('871000000000000028');
      const issued = await link(revoked, '2026-10-01T10:00:00Z'); // left open when the sandbox signed, before D28
      const signedLink = await link(revoked, '2026-10-01T11:00:00Z', '2026-10-01T11:05:00Z');
      await q(`insert into mandates (connection_id, mandate_link_id, channel, signatory_name, signed_at, clause_version, clause_sha256, locale, ean_code, address, status, revoked_at)
               values ('${revoked}', '${signedLink}', 'signing_page', 'Jan', '2026-10-01T11:05:00Z', 'v1', 'h', 'nl', '871000000000000011', 'a', 'revoked', '2026-10-05T09:00:00Z')`);
      const after = await link(revoked, '2026-10-06T10:00:00Z');
      const other = await link(untouched, '2026-10-01T10:00:00Z');

      await migrate(h.db);
      const rows = await h.db.selectFrom('mandate_links').select(['id', 'voided_at']).execute();
      const voidedAt = (id: string) => rows.find((r) => r.id === id)!.voided_at;
      expect(voidedAt(issued)).toEqual(new Date('2026-10-05T09:00:00Z'));
      expect(voidedAt(signedLink)).toEqual(new Date('2026-10-05T09:00:00Z'));
      expect(voidedAt(after)).toBeNull();
      expect(voidedAt(other)).toBeNull();
    } finally {
      await h.close();
      fs.rmSync(before, { recursive: true, force: true });
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    }
  });
});
