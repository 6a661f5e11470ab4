// The one catalog resolver (ARCHITECTURE.md): GET /v1/catalog/chargers/resolve, POST /v1/chargers with
// ocpp_vendor/ocpp_model, and OCPP BootNotification all call resolveCatalogModel.
// Matching: the reported vendor and model, normalised (trimmed, lower case, single spaces), against each
// model's aliases: an exact alias first, then the longest prefix alias (SKU families such as "NG910-60…") or
// pattern alias (a glob such as "KC-P30-EC*-M*", where the MID option sits inside the type code).
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';

export interface CatalogModel {
  catalog_charger_id: string;
  brand: string;
  model: string;
  mid_meter: boolean;
  max_power_w: number;
}

export type ResolveResult =
  | { resolved: true; model: CatalogModel }
  | { resolved: false; detail: string; suggestions: CatalogModel[] };

export function normaliseReported(s: string): string {
  return s.trim().replace(/\s+/g, ' ').toLowerCase();
}

const modelColumns = [
  'catalog_models.id as catalog_charger_id',
  'catalog_models.brand',
  'catalog_models.model',
  'catalog_models.mid_meter',
  'catalog_models.max_power_w',
] as const;

export async function resolveCatalogModel(db: Db, vendor: string, model: string): Promise<ResolveResult> {
  const v = normaliseReported(vendor);
  const m = normaliseReported(model);
  if (v && m) {
    const hit = await db
      .selectFrom('catalog_aliases')
      .innerJoin('catalog_models', 'catalog_models.id', 'catalog_aliases.catalog_model_id')
      .select(modelColumns)
      .where('catalog_aliases.vendor', '=', v)
      .where((eb) =>
        eb.or([
          eb.and([eb('catalog_aliases.match', '=', 'exact'), eb('catalog_aliases.model', '=', m)]),
          eb.and([
            eb('catalog_aliases.match', '=', 'prefix'),
            eb(sql.val(m), 'like', sql<string>`replace(replace(replace(catalog_aliases.model, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%'`),
          ]),
          // 'pattern' (migration 0011): a glob, '*' any run, '?' one character
          eb.and([
            eb(sql<string>`catalog_aliases.match`, '=', 'pattern'),
            eb(
              sql.val(m),
              'like',
              sql<string>`replace(replace(replace(replace(replace(catalog_aliases.model, '\\', '\\\\'), '%', '\\%'), '_', '\\_'), '*', '%'), '?', '_')`,
            ),
          ]),
        ]),
      )
      // exact first, then the longest (most specific) prefix or pattern
      .orderBy(sql`case when catalog_aliases.match = 'exact' then 0 else 1 end`)
      .orderBy(sql`length(catalog_aliases.model)`, 'desc')
      .executeTakeFirst();
    if (hit) return { resolved: true, model: hit };
  }
  // Unresolved: suggest the MID models of the brand the vendor string names (spec §4.1).
  const suggestions = v
    ? await db
        .selectFrom('catalog_models')
        .select(modelColumns)
        .where('catalog_models.mid_meter', '=', true)
        .where((eb) =>
          eb.or([
            eb(sql`lower(catalog_models.brand)`, '=', v),
            eb(
              'catalog_models.id',
              'in',
              eb.selectFrom('catalog_aliases').select('catalog_aliases.catalog_model_id').where('catalog_aliases.vendor', '=', v),
            ),
          ]),
        )
        .orderBy('catalog_models.brand')
        .orderBy('catalog_models.model')
        .execute()
    : [];
  return {
    resolved: false,
    detail: suggestions.length
      ? `No catalog model matches vendor "${vendor}" and model "${model}"; the brand's MID models are listed in suggestions.`
      : `No catalog model matches vendor "${vendor}" and model "${model}".`,
    suggestions,
  };
}
