// GET /v1/catalog/chargers/resolve and GET /v1/catalog/chargers (spec §4.1): any valid CPO token, no scope.
// The resolver is the one BootNotification uses (ARCHITECTURE.md: one domain, several doors).
import { listMidModels, resolveCatalogModel } from '../../domain/catalog/index.ts';
import type { RouteRegistrar } from '../types.ts';
import { CatalogList, ListCatalogQuery, ResolveQuery, ResolveResponse } from '../../../schemas/http/catalog.ts';
import { ErrorBody, errorOf } from '../../../schemas/http/onboarding-common.ts';

const authErrors = { 401: ErrorBody, 403: ErrorBody, 429: ErrorBody };

export const catalogRoutes: RouteRegistrar = (app, deps) => {
  app.get(
    '/v1/catalog/chargers/resolve',
    {
      config: { auth: { accepts: ['cpo'] } },
      schema: {
        tags: ['CPO API'],
        summary: 'Resolve a BootNotification vendor/model pair to a catalog model (check mid_meter before registering)',
        querystring: ResolveQuery,
        response: { 200: ResolveResponse, 400: errorOf('invalid_request'), ...authErrors },
      },
    },
    async (req) => {
      const { vendor, model } = req.query;
      const r = await resolveCatalogModel(deps.db, vendor, model);
      if (r.resolved) {
        return {
          resolved: true as const,
          vendor,
          model,
          catalog_charger_id: r.model.catalog_charger_id,
          brand: r.model.brand,
          catalog_model: r.model.model,
          mid_meter: r.model.mid_meter,
        };
      }
      return {
        resolved: false as const,
        vendor,
        model,
        detail: r.detail,
        suggestions: r.suggestions.map((s) => ({ catalog_charger_id: s.catalog_charger_id, brand: s.brand, model: s.model })),
      };
    },
  );

  app.get(
    '/v1/catalog/chargers',
    {
      config: { auth: { accepts: ['cpo'] } },
      schema: {
        tags: ['CPO API'],
        summary: 'MID-certified catalog models, sorted by brand and model (search on brand and model; no offset)',
        querystring: ListCatalogQuery,
        response: { 200: CatalogList, 400: errorOf('invalid_request'), ...authErrors },
      },
    },
    async (req) => listMidModels(deps.db, req.query),
  );
};
