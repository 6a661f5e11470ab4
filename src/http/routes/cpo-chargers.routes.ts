// POST /v1/chargers (spec §4.1): register a charger on an account against a MID catalog model.
import { z } from 'zod';
import { registerCpoCharger } from '../../domain/chargers/cpo-register.ts';
import { principalOf } from '../auth.ts';
import type { RouteRegistrar } from '../types.ts';
import { IdempotentCharger, RegisterChargerBody, RegisteredCharger } from '../../../schemas/http/chargers-cpo.ts';
import { ErrorBody, errorOf } from '../../../schemas/http/onboarding-common.ts';
import { CatalogModelItem } from '../../../schemas/http/catalog.ts';

export const cpoChargersRoutes: RouteRegistrar = (app, deps) => {
  app.post(
    '/v1/chargers',
    {
      config: { auth: { accepts: ['cpo'], scope: 'cpo:chargers:write' } },
      schema: {
        tags: ['CPO API'],
        summary: 'Register a charger on an account (catalog_charger_id, or ocpp_vendor + ocpp_model resolved server-side)',
        body: RegisterChargerBody,
        response: {
          201: RegisteredCharger,
          200: IdempotentCharger.describe('re-post of an existing serial_number'),
          400: errorOf('invalid_account_id', 'invalid_catalog_charger_id', 'vendor_and_model_required', 'invalid_json', 'invalid_request'),
          404: errorOf('account_not_found', 'catalog_not_found'),
          409: errorOf('no_connection', 'serial_required'),
          // catalog_unresolved carries the brand's MID models (domain/chargers/cpo-register.ts, spec §4.1)
          422: ErrorBody.extend({
            suggestions: z
              .array(CatalogModelItem)
              .optional()
              .describe('catalog_unresolved: the MID models of the brand the vendor names, to send as catalog_charger_id (empty when it names none)'),
          }).describe('error: catalog_not_mid | catalog_unresolved | charger_limit'),
          401: ErrorBody,
          403: ErrorBody,
          429: ErrorBody,
        },
      },
    },
    async (req, reply) => {
      const r = await registerCpoCharger(deps, principalOf(req, 'cpo').partnerId, req.body);
      const eligibility = { mid_eligible: r.midEligible, account_ere_eligible: r.accountEreEligible };
      // rule 1: a re-post with the serial number of an existing charger answers that charger (200)
      if (!r.created || !r.catalog) return reply.code(200).send({ ok: true, idempotent: true, charger_id: r.chargerId, ...eligibility });
      return reply.code(201).send({ ok: true, charger_id: r.chargerId, catalog: r.catalog, ...eligibility });
    },
  );
};
