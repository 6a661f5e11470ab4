// POST /v1/chargers (spec §4.1). Each field's type failure names its spec code (src/http/validation-codes.ts), and
// so does the rule across fields (catalog_charger_id, or both ocpp_vendor and ocpp_model: vendor_and_model_required,
// reported on ocpp_vendor), checked once every field has its type.
import { z } from 'zod';
import { EXAMPLE_UUID, UUID_PATTERN } from './common.ts';

export const RegisterChargerBody = z
  .object({
    account_id: z
      .string({ error: 'account_id must be a uuid.' })
      .regex(UUID_PATTERN, { error: 'account_id must be a uuid.' })
      .meta({ format: 'uuid' })
      .describe('the account (from POST /v1/accounts)'),
    catalog_charger_id: z
      .union([z.literal(''), z.string().regex(UUID_PATTERN).meta({ format: 'uuid' })], {
        error: 'catalog_charger_id must be a uuid of this environment’s catalog.',
      })
      .nullish()
      .describe('uuid of a MID model in this environment’s catalog (GET /v1/catalog/chargers); wins over ocpp_vendor/ocpp_model'),
    ocpp_vendor: z
      .string({ error: 'ocpp_vendor must be a string.' })
      .nullish()
      .describe('chargePointVendor of the BootNotification; with ocpp_model when no catalog_charger_id is sent'),
    ocpp_model: z
      .string({ error: 'ocpp_model must be a string.' })
      .nullish()
      .describe('chargePointModel of the BootNotification'),
    serial_number: z
      .string({ error: 'serial_number must be a string.' })
      .nullish()
      .describe('unit serial or meter number; required from the second charger on; idempotency key'),
  })
  .superRefine((b, ctx) => {
    const filled = (v: string | null | undefined) => typeof v === 'string' && v.trim() !== '';
    if (!filled(b.catalog_charger_id) && !(filled(b.ocpp_vendor) && filled(b.ocpp_model))) {
      ctx.addIssue({ code: 'custom', path: ['ocpp_vendor'], message: 'Send catalog_charger_id, or both ocpp_vendor and ocpp_model.' });
    }
  })
  .meta({
    examples: [
      { account_id: EXAMPLE_UUID, ocpp_vendor: 'Alfen BV', ocpp_model: 'NG910-60023', serial_number: 'ACE0123456' },
    ],
  });

export const CatalogRef = z.object({ catalog_charger_id: z.uuid(), brand: z.string(), model: z.string() });

export const RegisteredCharger = z.object({
  ok: z.boolean(),
  charger_id: z.uuid(),
  catalog: CatalogRef,
  mid_eligible: z.boolean(),
  account_ere_eligible: z.boolean(),
});

export const IdempotentCharger = z.object({
  ok: z.boolean(),
  idempotent: z.literal(true),
  charger_id: z.uuid(),
  mid_eligible: z.boolean(),
  account_ere_eligible: z.boolean(),
});
