// D209: the bundled MID catalog reaches a database that already has one. A release whose bundled file lists a new
// model (or a new alias of a known model) adds it at the next start; the operator's edits and removals are kept, and
// a start that finds nothing new adds nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundledCatalog, readCatalogFile } from '../../src/domain/catalog/load.ts';
import { createTestService, type TestService, TEST_ADMIN_TOKEN } from '../helpers/app.ts';
import { aPartner, aUser, bearer } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let token: string;
let file: string;

const NEW_MODEL = {
  brand: 'Voltwerk',
  model: 'Home 11 MID',
  mid_meter: true,
  max_power_w: 11000,
  source: 'Test entry of a later release: Voltwerk Home 11 datasheet, MID annex B+D.',
  aliases: [{ vendor: 'Voltwerk GmbH', model: 'VW-H11-M', match: 'prefix' as const }],
};
// a new alias of a model every database already has (the Zaptec Pro), and one the operator had already given to a
// model of its own before the release came
const NEW_ALIAS = { vendor: 'Zaptec', model: 'ZAPTEC PRO 2024', match: 'exact' as const };
const TAKEN_ALIAS = { vendor: 'Zaptec', model: 'ZAPTEC PRO X', match: 'exact' as const };

beforeAll(async () => {
  // the service's start loads the bundled catalog (an empty database gets all of it), as every deployment's first start
  svc = await createTestService({ listen: true });
  token = await (await aPartner(svc.deps, { scopes: ['cpo:sessions:write'] })).cpoToken();
  // the next release's bundled file: the current one, one more model, two more aliases of the Zaptec Pro
  const next = readCatalogFile().map((e) =>
    e.brand === 'Zaptec' && e.model === 'Pro' ? { ...e, aliases: [...e.aliases, NEW_ALIAS, TAKEN_ALIAS] } : e,
  );
  file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ere-catalog-')), 'mid-chargers.json');
  fs.writeFileSync(file, JSON.stringify([...next, NEW_MODEL], null, 2));
});
afterAll(() => svc.close());

const admin = (payload: object) => svc.app.inject({ method: 'POST', url: '/admin/catalog/models', headers: bearer(TEST_ADMIN_TOKEN), payload });
const resolve = async (vendor: string, model: string) =>
  (await svc.app.inject({ method: 'GET', url: `/v1/catalog/chargers/resolve?${new URLSearchParams({ vendor, model })}`, headers: bearer(token) })).json();
const count = async (table: 'catalog_models' | 'catalog_aliases') =>
  Number((await svc.deps.db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
const modelRow = (brand: string, model: string) =>
  svc.deps.db.selectFrom('catalog_models').selectAll().where('brand', '=', brand).where('model', '=', model).executeTakeFirst();

describe('D209 a later release of the bundled catalog', () => {
  let chargerUnknown: { chargerId: string; identity: string; password: string };

  it('adds its new model and new alias to a database that has the catalog, and keeps the operator\'s edits', async () => {
    // before the upgrade: the operator corrected a bundled model and gave a (then unlisted) alias to a model of its own
    expect((await admin({ brand: 'Alfen', model: 'Eve Single Pro-line', mid_meter: false, max_power_w: 11000, source: 'operator: our units lack the meter' })).statusCode).toBe(201);
    expect((await admin({ brand: 'Zaptec', model: 'Pro X (operator)', mid_meter: false, aliases: [TAKEN_ALIAS] })).statusCode).toBe(201);
    // a charger of the not yet listed model boots: unresolved, not MID
    const user = await aUser(svc.deps);
    chargerUnknown = await anOcppCharger(svc, user);
    await (await connectCharger(svc, chargerUnknown, 'ocpp1.6', { vendor: 'Voltwerk GmbH', model: 'VW-H11-M-T2' })).close();
    expect((await resolve('Voltwerk GmbH', 'VW-H11-M-T2')).resolved).toBe(false);
    expect((await resolve('Zaptec', 'Zaptec Pro 2024')).resolved).toBe(false);
    const models = await count('catalog_models');
    const aliases = await count('catalog_aliases');

    // the upgraded start
    const added = await loadBundledCatalog(svc.deps.db, file);
    expect(await count('catalog_models')).toBe(models + 1);
    expect(await count('catalog_aliases')).toBe(aliases + 2);
    expect(await resolve('Voltwerk GmbH', 'VW-H11-M-T2')).toMatchObject({ resolved: true, brand: 'Voltwerk', catalog_model: 'Home 11 MID', mid_meter: true });
    expect(await resolve('Zaptec', 'Zaptec Pro 2024')).toMatchObject({ resolved: true, brand: 'Zaptec', catalog_model: 'Pro', mid_meter: true });
    // the operator's edit of the bundled model and its choice for the alias stand
    expect(await modelRow('Alfen', 'Eve Single Pro-line')).toMatchObject({ mid_meter: false, max_power_w: 11000, source_note: 'operator: our units lack the meter' });
    expect(await resolve('Zaptec', 'ZAPTEC PRO X')).toMatchObject({ resolved: true, catalog_model: 'Pro X (operator)', mid_meter: false });
    // the bundled models the database had are as they were (the Zaptec Pro kept its id: its chargers stay resolved)
    expect(await modelRow('Zaptec', 'Pro')).toMatchObject({ mid_meter: true, max_power_w: 22000 });
    // what the start logs
    expect(added).toEqual({ models: 1, aliases: 2 });
  });

  it('resolves the charger of the new model at its next BootNotification', async () => {
    const before = await svc.deps.db.selectFrom('chargers').select(['catalog_model_id', 'mid_certified']).where('id', '=', chargerUnknown.chargerId).executeTakeFirstOrThrow();
    expect(before).toEqual({ catalog_model_id: null, mid_certified: false });
    await (await connectCharger(svc, chargerUnknown, 'ocpp1.6', { vendor: 'Voltwerk GmbH', model: 'VW-H11-M-T2' })).close();
    const after = await svc.deps.db.selectFrom('chargers').select(['catalog_model_id', 'mid_certified']).where('id', '=', chargerUnknown.chargerId).executeTakeFirstOrThrow();
    expect(after).toEqual({ catalog_model_id: (await modelRow('Voltwerk', 'Home 11 MID'))!.id, mid_certified: true });
  });

  it('a second start adds nothing', async () => {
    const models = await count('catalog_models');
    const aliases = await count('catalog_aliases');
    const added = await loadBundledCatalog(svc.deps.db, file);
    expect(await count('catalog_models')).toBe(models);
    expect(await count('catalog_aliases')).toBe(aliases);
    expect(added).toEqual({ models: 0, aliases: 0 });
  });

  it('a bundled model or alias the operator removed is not put back at the next start', async () => {
    // removal is by hand (the admin API only adds and updates); the Voltwerk charger is moved off the model first
    await svc.deps.db.updateTable('chargers').set({ catalog_model_id: null }).where('id', '=', chargerUnknown.chargerId).execute();
    await svc.deps.db.deleteFrom('catalog_models').where('brand', '=', 'Voltwerk').execute();
    await svc.deps.db.deleteFrom('catalog_aliases').where('vendor', '=', 'zaptec').where('model', '=', 'zaptec pro 2024').execute();
    const added = await loadBundledCatalog(svc.deps.db, file);
    expect(await modelRow('Voltwerk', 'Home 11 MID')).toBeUndefined();
    expect((await resolve('Zaptec', 'Zaptec Pro 2024')).resolved).toBe(false);
    expect(added).toEqual({ models: 0, aliases: 0 });
    // and a start with the service's own file (the restart) neither
    expect(await loadBundledCatalog(svc.deps.db)).toEqual({ models: 0, aliases: 0 });
  });
});
