// GET /v1/catalog/chargers/resolve, GET /v1/catalog/chargers (spec §4.1), POST /admin/catalog/models (C1.6).
import { z } from 'zod';
import { INT4_MAX } from './common.ts';

export const CatalogModelItem = z.object({ catalog_charger_id: z.uuid(), brand: z.string(), model: z.string() });

export const ResolveQuery = z.object({
  vendor: z.string().describe('chargePointVendor exactly as reported'),
  model: z.string().describe('chargePointModel exactly as reported'),
});

export const ResolveResponse = z.union([
  z.object({
    resolved: z.literal(true),
    vendor: z.string(),
    model: z.string(),
    catalog_charger_id: z.uuid(),
    brand: z.string(),
    catalog_model: z.string(),
    mid_meter: z.boolean(),
  }),
  z.object({
    resolved: z.literal(false),
    vendor: z.string(),
    model: z.string(),
    detail: z.string(),
    suggestions: z.array(CatalogModelItem),
  }),
]);

export const ListCatalogQuery = z.object({
  search: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(100),
});

export const CatalogList = z.object({ models: z.array(CatalogModelItem), count: z.number().int() });

export const AdminCatalogModelBody = z.object({
  brand: z.string().trim().min(1),
  model: z.string().trim().min(1),
  mid_meter: z.boolean(),
  max_power_w: z.number().int().positive().max(INT4_MAX).optional(),
  source: z.string().optional(),
  aliases: z
    .array(z.object({ vendor: z.string().trim().min(1), model: z.string().trim().min(1), match: z.enum(['exact', 'prefix', 'pattern']).default('exact') }))
    .optional(),
});

export const AdminEanRegisterBody = z.object({
  entries: z.array(
    z.object({
      ean_code: z.string().regex(/^\s*\d{18}\s*$/, 'ean_code must be 18 digits'),
      postal_code: z.string().trim().min(1),
      house_number: z.union([z.string().trim().min(1), z.number().int().positive()]).transform(String),
      house_number_addition: z.string().nullable().optional(),
    }),
  ).max(100_000),
});
