// The bundled MID catalog (issue 3 item 6), GET /v1/catalog/chargers/resolve, GET /v1/catalog/chargers and
// POST /admin/catalog/models (C1.6).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService, TEST_ADMIN_TOKEN } from '../helpers/app.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { readCatalogFile } from '../../src/domain/catalog/load.ts';

describe('bundled catalog file', () => {
  const entries = readCatalogFile();
  it('holds at least 40 MID models from at least 15 brands, a few non-MID models, a source note and aliases per entry', () => {
    const mid = entries.filter((e) => e.mid_meter);
    expect(mid.length).toBeGreaterThanOrEqual(40);
    expect(new Set(mid.map((e) => e.brand)).size).toBeGreaterThanOrEqual(15);
    expect(entries.filter((e) => !e.mid_meter).length).toBeGreaterThanOrEqual(3);
    for (const e of entries) {
      expect(e.source, `${e.brand} ${e.model}`).toMatch(/\S{10,}/);
      expect(e.aliases.length, `${e.brand} ${e.model}`).toBeGreaterThan(0);
    }
  });
  it('has unique (brand, model) and unique aliases', () => {
    const keys = entries.map((e) => `${e.brand}|${e.model}`.toLowerCase());
    expect(new Set(keys).size).toBe(keys.length);
    const aliases = entries.flatMap((e) => e.aliases.map((a) => `${a.vendor}|${a.model}|${a.match}`.toLowerCase().replace(/\s+/g, ' ')));
    expect(new Set(aliases).size).toBe(aliases.length);
  });
});

describe('catalog routes', () => {
  let svc: TestService;
  let partner: TestPartner;
  let token: string;

  beforeAll(async () => {
    svc = await createTestService();
    partner = await aPartner(svc.deps, { scopes: ['cpo:sessions:write'] });
    token = await partner.cpoToken();
  });
  afterAll(() => svc.close());

  const resolve = (vendor: string, model: string) =>
    svc.app.inject({ method: 'GET', url: `/v1/catalog/chargers/resolve?${new URLSearchParams({ vendor, model })}`, headers: bearer(token) });
  const list = (qs = '') => svc.app.inject({ method: 'GET', url: `/v1/catalog/chargers${qs}`, headers: bearer(token) });

  it('the bundled catalog is loaded on start', async () => {
    const n = await svc.deps.db.selectFrom('catalog_models').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    expect(Number(n.n)).toBe(readCatalogFile().length);
  });

  it('resolves a prefix alias (SKU family) with any CPO token, no scope needed', async () => {
    const res = await resolve('Alfen BV', 'NG910-60123');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      resolved: true,
      vendor: 'Alfen BV',
      model: 'NG910-60123',
      catalog_charger_id: expect.any(String),
      brand: 'Alfen',
      catalog_model: 'Eve Single Pro-line',
      mid_meter: true,
    });
  });

  it('resolves exact aliases case- and whitespace-insensitively', async () => {
    const res = await resolve('  zaptec ', 'Zaptec   PRO');
    expect(res.json()).toMatchObject({ resolved: true, brand: 'Zaptec', catalog_model: 'Pro', vendor: '  zaptec ', model: 'Zaptec   PRO' });
  });

  it('prefers an exact alias over a prefix and the longest prefix', async () => {
    const admin = (payload: object) => svc.app.inject({ method: 'POST', url: '/admin/catalog/models', headers: bearer(TEST_ADMIN_TOKEN), payload });
    await admin({ brand: 'Acme', model: 'Family', mid_meter: true, aliases: [{ vendor: 'Acme', model: 'AC-', match: 'prefix' }] });
    await admin({ brand: 'Acme', model: 'Family 22', mid_meter: true, aliases: [{ vendor: 'Acme', model: 'AC-22', match: 'prefix' }] });
    await admin({ brand: 'Acme', model: 'Special', mid_meter: false, aliases: [{ vendor: 'Acme', model: 'AC-22-X', match: 'exact' }] });
    expect((await resolve('Acme', 'AC-11-B')).json().catalog_model).toBe('Family');
    expect((await resolve('Acme', 'AC-22-B')).json().catalog_model).toBe('Family 22');
    expect((await resolve('Acme', 'AC-22-X')).json()).toMatchObject({ catalog_model: 'Special', mid_meter: false });
  });

  it('pattern aliases tell MID and non-MID type codes of one family apart (KEBA P30)', async () => {
    expect((await resolve('Keba AG', 'KC-P30-EC2401B2-M0R')).json()).toMatchObject({ resolved: true, catalog_model: 'KeContact P30 c-series MID', mid_meter: true });
    expect((await resolve('Keba AG', 'KC-P30-EC240422-M0R')).json()).toMatchObject({ resolved: true, catalog_model: 'KeContact P30 c-series MID', mid_meter: true });
    expect((await resolve('Keba AG', 'KC-P30-EC240422-E00')).json()).toMatchObject({ resolved: true, mid_meter: false });
    expect((await resolve('Keba AG', 'KC-P30-EX2400U2-M0R')).json()).toMatchObject({ catalog_model: 'KeContact P30 x-series MID' });
    expect((await resolve('ABB', 'TAC-W11-G5-R-M-0')).json()).toMatchObject({ resolved: true, brand: 'ABB', mid_meter: true });
    expect((await resolve('ABB', 'TAC-W11-G5-R-C-0')).json()).toMatchObject({ resolved: false });
    // '%' and '_' in a reported model are literal, not wildcards
    expect((await resolve('Keba AG', 'KC-P30-EC%')).json().resolved).toBe(false);
  });

  it('a resolved non-MID model reports mid_meter: false', async () => {
    const res = await resolve('Easee', 'Easee Home');
    expect(res.json()).toMatchObject({ resolved: true, brand: 'Easee', mid_meter: false });
  });

  it('unresolved: 200 with detail and the brand’s MID models as suggestions (never non-MID ones)', async () => {
    const res = await resolve('Alfen BV', 'ZZ-999');
    expect(res.statusCode).toBe(200);
    const j = res.json();
    expect(j).toMatchObject({ resolved: false, vendor: 'Alfen BV', model: 'ZZ-999', detail: expect.any(String) });
    expect(j.suggestions.length).toBeGreaterThanOrEqual(3);
    expect(j.suggestions.every((s: { brand: string }) => s.brand === 'Alfen')).toBe(true);
    const none = (await resolve('Nobody Inc', 'X1')).json();
    expect(none).toMatchObject({ resolved: false, suggestions: [] });
    const easee = (await resolve('Easee', 'Unknown')).json();
    expect(easee.suggestions).toEqual([]);
  });

  it('lists MID models only, sorted by brand and model, with count; search and limit', async () => {
    const res = await list();
    expect(res.statusCode).toBe(200);
    const j = res.json();
    expect(j.models.length).toBe(Math.min(100, j.count));
    const names = j.models.map((m: { brand: string; model: string }) => `${m.brand}|${m.model}`.toLowerCase());
    expect(names).toEqual([...names].sort());
    expect(j.models.some((m: { brand: string }) => m.brand === 'Easee')).toBe(false);
    expect(j.models[0]).toEqual({ catalog_charger_id: expect.any(String), brand: expect.any(String), model: expect.any(String) });
    const search = (await list('?search=eve%20PRO')).json();
    expect(search.models.map((m: { model: string }) => m.model)).toEqual(['Eve Double Pro-line', 'Eve Single Pro-line']);
    expect(search.count).toBe(2);
    const limited = (await list('?limit=3')).json();
    expect(limited.models).toHaveLength(3);
    expect(limited.count).toBe(j.count);
  });

  it.each(['?limit=0', '?limit=201'])('400 invalid_request for %s', async (qs) => {
    const res = await list(qs);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_request');
  });

  it('a partner key is refused on the catalog routes (403 partner_api_key_scope, C1.3)', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/v1/catalog/chargers', headers: bearer(partner.apiKey) });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('partner_api_key_scope');
  });

  it('POST /admin/catalog/models creates (201) and upserts by brand and model; needs the admin token', async () => {
    const payload = { brand: 'Newco', model: 'Wall 1', mid_meter: true, aliases: [{ vendor: 'Newco BV', model: 'NW1-', match: 'prefix' }] };
    const res = await svc.app.inject({ method: 'POST', url: '/admin/catalog/models', headers: bearer(TEST_ADMIN_TOKEN), payload });
    expect(res.statusCode).toBe(201);
    const id = res.json().catalog_charger_id;
    const again = await svc.app.inject({ method: 'POST', url: '/admin/catalog/models', headers: bearer(TEST_ADMIN_TOKEN), payload: { ...payload, model: 'WALL 1', mid_meter: false } });
    expect(again.json().catalog_charger_id).toBe(id);
    const row = await svc.deps.db.selectFrom('catalog_models').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.mid_meter).toBe(false);
    const aliases = await svc.deps.db.selectFrom('catalog_aliases').select(['vendor', 'model', 'match']).where('catalog_model_id', '=', id).execute();
    expect(aliases).toEqual([{ vendor: 'newco bv', model: 'nw1-', match: 'prefix' }]);
    expect((await resolve('Newco BV', 'NW1-22')).json()).toMatchObject({ resolved: true, catalog_charger_id: id });
    const noAuth = await svc.app.inject({ method: 'POST', url: '/admin/catalog/models', payload });
    expect(noAuth.statusCode).toBe(401);
    const bad = await svc.app.inject({ method: 'POST', url: '/admin/catalog/models', headers: bearer(TEST_ADMIN_TOKEN), payload: { brand: 'X' } });
    expect(bad.statusCode).toBe(400);
  });
});
