// Brings the bundled MID catalog (schemas/catalog/mid-chargers.json) into a database at every start (C1.7, D209):
// the models and aliases the database was never offered are added, so an upgrade whose bundled file lists a new
// model (or a new alias of a known one) reaches a database that already has a catalog. Nothing in the database is
// changed or removed: an operator's edit of a bundled model (POST /admin/catalog/models) or an alias the operator
// moved to another model wins, and an entry offered once (recorded in catalog_offered_*, migration 0080) is not
// offered again, so what the operator removed by hand stays removed.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import { normaliseReported } from './resolve.ts';

/** A bundled model as readCatalogFile gives it (only the fields stored in catalog_models and its aliases). */
export interface BundledEntry {
  brand: string;
  model: string;
  mid_meter: boolean;
  max_power_w: number;
  source?: string | undefined;
  aliases: Array<{ vendor: string; model: string; match: 'exact' | 'prefix' | 'pattern' }>;
}

export interface BundledSyncResult {
  /** models added to catalog_models by this start */
  models: number;
  /** aliases added to catalog_aliases by this start */
  aliases: number;
}

const modelKey = (brand: string, model: string) => `${brand.toLowerCase()}\u0000${model.toLowerCase()}`;

/**
 * Offer the bundled entries to the database: one transaction under the catalog's advisory lock (several processes
 * start at once), two statements. Returns how many models and aliases were added.
 */
export async function syncBundledCatalog(db: Db, entries: BundledEntry[]): Promise<BundledSyncResult> {
  if (entries.length === 0) return { models: 0, aliases: 0 };
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(hashtext('ere-gateway:catalog-load'))`.execute(trx);
    const models = await offerModels(trx, entries);
    const aliases = await offerAliases(trx, entries);
    return { models, aliases };
  });
}

/**
 * The bundled models not offered before are recorded as offered and inserted, unless a model with the same brand and
 * model (case-insensitive, the unique index of migration 0001) is there: the operator's row is kept as it is.
 */
async function offerModels(trx: Db, entries: BundledEntry[]): Promise<number> {
  const byKey = new Map(entries.map((e) => [modelKey(e.brand, e.model), e]));
  const m = [...byKey.values()];
  const r = await sql<{ id: string }>`
    with b as (
      select * from unnest(${m.map((e) => e.brand)}::text[], ${m.map((e) => e.model)}::text[],
                           ${m.map((e) => e.mid_meter)}::boolean[], ${m.map((e) => e.max_power_w)}::int[],
                           ${m.map((e) => e.source ?? null)}::text[])
        as b(brand, model, mid_meter, max_power_w, source_note)
    ), offered as (
      insert into catalog_offered_models (brand, model)
      select lower(brand), lower(model) from b
      on conflict do nothing
      returning brand, model
    )
    insert into catalog_models (brand, model, mid_meter, max_power_w, source_note)
    select b.brand, b.model, b.mid_meter, b.max_power_w, b.source_note
      from b join offered o on o.brand = lower(b.brand) and o.model = lower(b.model)
    on conflict do nothing
    returning id`.execute(trx);
  return r.rows.length;
}

/**
 * The bundled aliases not offered before are recorded as offered and inserted for their model, unless the same
 * (vendor, model, match) is there (it may point at another model: the operator's choice is kept) or their model is
 * not in the database (the operator removed it; its aliases would only bring it back half).
 */
async function offerAliases(trx: Db, entries: BundledEntry[]): Promise<number> {
  const byKey = new Map<string, { brand: string; cmodel: string; vendor: string; model: string; match: string }>();
  for (const e of entries) {
    for (const a of e.aliases) {
      const row = { brand: e.brand, cmodel: e.model, vendor: normaliseReported(a.vendor), model: normaliseReported(a.model), match: a.match };
      // one (vendor, model, match) belongs to one model: the first entry that names it, as the file is read
      const k = `${row.vendor}\u0000${row.model}\u0000${row.match}`;
      if (!byKey.has(k)) byKey.set(k, row);
    }
  }
  if (byKey.size === 0) return 0;
  const a = [...byKey.values()];
  const r = await sql<{ id: string }>`
    with b as (
      select * from unnest(${a.map((x) => x.brand)}::text[], ${a.map((x) => x.cmodel)}::text[], ${a.map((x) => x.vendor)}::text[],
                           ${a.map((x) => x.model)}::text[], ${a.map((x) => x.match)}::text[])
        as b(brand, cmodel, vendor, model, match)
    ), offered as (
      insert into catalog_offered_aliases (vendor, model, match)
      select vendor, model, match from b
      on conflict do nothing
      returning vendor, model, match
    )
    insert into catalog_aliases (catalog_model_id, vendor, model, match)
    select m.id, b.vendor, b.model, b.match
      from b
      join offered o on o.vendor = b.vendor and o.model = b.model and o.match = b.match
      join catalog_models m on lower(m.brand) = lower(b.brand) and lower(m.model) = lower(b.cmodel)
    on conflict do nothing
    returning id`.execute(trx);
  return r.rows.length;
}
