// POST /admin/catalog/models (C1.6): add or update a catalog model with its BootNotification aliases.
import { z } from 'zod';
import { upsertCatalogModel } from '../../domain/catalog/index.ts';
import type { RouteRegistrar } from '../types.ts';
import { AdminCatalogModelBody } from '../../../schemas/http/catalog.ts';
import { ErrorBody, errorOf } from '../../../schemas/http/onboarding-common.ts';

export const adminCatalogRoutes: RouteRegistrar = (app, deps) => {
  app.post(
    '/admin/catalog/models',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: 'Add or update a catalog model (keyed by brand and model) and its aliases',
        body: AdminCatalogModelBody,
        response: { 201: z.object({ catalog_charger_id: z.uuid() }), 400: errorOf('invalid_request'), 401: ErrorBody },
      },
    },
    async (req, reply) => {
      const b = req.body;
      const id = await upsertCatalogModel(deps.db, {
        brand: b.brand,
        model: b.model,
        mid_meter: b.mid_meter,
        ...(b.max_power_w ? { max_power_w: b.max_power_w } : {}),
        ...(b.source ? { source: b.source } : {}),
        aliases: b.aliases ?? [],
      });
      return reply.code(201).send({ catalog_charger_id: id });
    },
  );
};
