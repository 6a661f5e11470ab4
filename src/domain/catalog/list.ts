// GET /v1/catalog/chargers (spec §4.1): MID-certified models, sorted by brand and model; `search` matches brand
// and model case-insensitively; limit without offset; count is the total matching (C6.2).
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';

export interface CatalogListItem {
  catalog_charger_id: string;
  brand: string;
  model: string;
}

export async function listMidModels(
  db: Db,
  q: { search?: string | undefined; limit: number },
): Promise<{ models: CatalogListItem[]; count: number }> {
  let base = db.selectFrom('catalog_models').where('mid_meter', '=', true);
  const search = q.search?.trim();
  if (search) {
    const words = search.toLowerCase().split(/\s+/).filter(Boolean);
    for (const w of words) {
      const pattern = '%' + w.replace(/[\\%_]/g, (c) => '\\' + c) + '%';
      base = base.where(sql<string>`lower(brand || ' ' || model)`, 'like', pattern);
    }
  }
  const { n } = await base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const models = await base
    .select(['id as catalog_charger_id', 'brand', 'model'])
    .orderBy(sql`lower(brand)`)
    .orderBy(sql`lower(model)`)
    .limit(q.limit)
    .execute();
  return { models, count: Number(n) };
}

export async function findCatalogModel(db: Db, id: string) {
  return db
    .selectFrom('catalog_models')
    .select(['id as catalog_charger_id', 'brand', 'model', 'mid_meter', 'max_power_w'])
    .where('id', '=', id)
    .executeTakeFirst();
}
