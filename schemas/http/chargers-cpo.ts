// POST /v1/chargers (spec §4.1).
import { z } from 'zod';

export const RegisterChargerBody = z
  .object({
    account_id: z.unknown().optional().describe('uuid (required)'),
    catalog_charger_id: z.unknown().optional().describe('uuid of a MID model in this environment’s catalog'),
    ocpp_vendor: z.unknown().optional().describe('chargePointVendor of the BootNotification'),
    ocpp_model: z.unknown().optional().describe('chargePointModel of the BootNotification'),
    serial_number: z.unknown().optional().describe('required from the second charger on; idempotency key'),
  })
  .loose();

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
