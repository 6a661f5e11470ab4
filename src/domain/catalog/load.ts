// Loads the bundled MID catalog (schemas/catalog/mid-chargers.json) at every start (C1.7 and D209; production too),
// and adds models through the admin API (C1.6). Idempotent: a model is keyed by (brand, model).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { z } from 'zod';
import type { Db } from '../../db/database.ts';
import { normaliseReported } from './resolve.ts';
import { syncBundledCatalog, type BundledSyncResult } from './bundled-sync.ts';

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
 * Bring the bundled catalog into the database (every start, production too): the models and aliases it was never
 * offered are added, nothing there is changed or removed (D209, bundled-sync.ts). Two statements in one transaction,
 * so a start (and every test service) pays a few milliseconds. Returns how many models and aliases were added.
 */
export async function loadBundledCatalog(db: Db, file = BUNDLED_CATALOG): Promise<BundledSyncResult> {
  return syncBundledCatalog(db, readCatalogFile(file));
}
