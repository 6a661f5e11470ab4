// Loads the bundled MID catalog (schemas/catalog/mid-chargers.json) on first start (C1.7; production too),
// and adds models through the admin API (C1.6). Idempotent: a model is keyed by (brand, model).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { z } from 'zod';
import type { Db } from '../../db/database.ts';
import { normaliseReported } from './resolve.ts';

export const BUNDLED_CATALOG = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../schemas/catalog/mid-chargers.json',
);

export const CatalogAlias = z.object({
  vendor: z.string().min(1),
  model: z.string().min(1),
  match: z.enum(['exact', 'prefix', 'pattern']).default('exact'),
});

export const CatalogEntry = z.object({
  brand: z.string().min(1),
  model: z.string().min(1),
  mid_meter: z.boolean(),
  max_power_w: z.number().int().positive().default(22000),
  source: z.string().min(1).optional(),
  aliases: z.array(CatalogAlias).default([]),
});
export type CatalogEntryInput = z.input<typeof CatalogEntry>;

/** Insert or update one model and add its aliases. Returns the catalog_charger_id. */
export async function upsertCatalogModel(db: Db, input: CatalogEntryInput): Promise<string> {
  const e = CatalogEntry.parse(input);
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('catalog_models')
      .values({ brand: e.brand, model: e.model, mid_meter: e.mid_meter, max_power_w: e.max_power_w, source_note: e.source ?? null })
      .onConflict((oc) =>
        oc.expression(sql`lower(brand), lower(model)`).doUpdateSet({
          mid_meter: e.mid_meter,
          max_power_w: e.max_power_w,
          source_note: e.source ?? null,
        }),
      )
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const a of e.aliases) {
      await trx
        .insertInto('catalog_aliases')
        .values({ catalog_model_id: row.id, vendor: normaliseReported(a.vendor), model: normaliseReported(a.model), match: a.match })
        .onConflict((oc) => oc.columns(['vendor', 'model', 'match']).doUpdateSet({ catalog_model_id: row.id }))
        .execute();
    }
    return row.id;
  });
}

/** Read and check the bundled catalog file (schemas/catalog/mid-chargers.json). */
export function readCatalogFile(file = BUNDLED_CATALOG): z.output<typeof CatalogEntry>[] {
  return z.array(CatalogEntry).parse(JSON.parse(fs.readFileSync(file, 'utf8')));
}

/**
 * Load the bundled catalog when the catalog is empty (every start, production too). Two statements in one
 * transaction, so a start (and every test service) pays a few milliseconds. Returns the models loaded.
 */
export async function loadBundledCatalog(db: Db, file = BUNDLED_CATALOG): Promise<number> {
  const entries = readCatalogFile(file);
  if (entries.length === 0) return 0;
  return db.transaction().execute(async (trx) => {
    // one loader at a time (two processes starting on one empty database)
    await sql`select pg_advisory_xact_lock(hashtext('ere-gateway:catalog-load'))`.execute(trx);
    const existing = await trx.selectFrom('catalog_models').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
    if (Number(existing.n) > 0) return 0;
    const models = await trx
      .insertInto('catalog_models')
      .values(entries.map((e) => ({ brand: e.brand, model: e.model, mid_meter: e.mid_meter, max_power_w: e.max_power_w, source_note: e.source ?? null })))
      .returning(['id', 'brand', 'model'])
      .execute();
    const idOf = new Map(models.map((m) => [`${m.brand.toLowerCase()}\u0000${m.model.toLowerCase()}`, m.id]));
    const aliases = new Map<string, { catalog_model_id: string; vendor: string; model: string; match: 'exact' | 'prefix' | 'pattern' }>();
    for (const e of entries) {
      const id = idOf.get(`${e.brand.toLowerCase()}\u0000${e.model.toLowerCase()}`)!;
      for (const a of e.aliases) {
        const row = { catalog_model_id: id, vendor: normaliseReported(a.vendor), model: normaliseReported(a.model), match: a.match };
        aliases.set(`${row.vendor}\u0000${row.model}\u0000${row.match}`, row);
      }
    }
    if (aliases.size) await trx.insertInto('catalog_aliases').values([...aliases.values()]).execute();
    return models.length;
  });
}
