// C2.5 GET /v1/ere-positions (CPO).
import { z } from 'zod';
import { FIRST_COMPLIANCE_YEAR } from './ere-position.ts';

export const ErePositionsQuery = z.object({
  cpo_external_ref: z.string().optional(),
  year: z.coerce.number().int().min(FIRST_COMPLIANCE_YEAR).max(9999).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});

export const CpoPositionSchema = z.object({
  account_id: z.string(),
  cpo_external_ref: z.string().nullable(),
  compliance_year: z.number().int(),
  ere_eligible: z.boolean(),
  payout_handler: z.enum(['joulo_pays_customer', 'via_cpo_invoicing']),
  settled_to: z.enum(['customer', 'partner']).describe('via_cpo_invoicing: settled to the partner, never paid to the customer'),
  delivered_kwh: z.number().describe('every kWh delivered in the year\'s months but rejected ones, a held excess included'),
  pending_kwh: z.number(),
  registered_kwh: z.number(),
  registered_ere: z.number(),
  payable_net_eur: z.number(),
  paid_net_eur: z.number(),
  months: z.array(
    z.object({
      month: z.string(),
      kwh: z.number(),
      status: z.enum(['delivered', 'in_review', 'registered', 'rejected']),
      ere: z.number(),
      held_kwh: z.number().describe('the energy above the connection\'s capacity (CONNECTION_MAX_KW × the hours of the month); 0 when within it. While held or after a rejection it is not in kwh (kwh + held_kwh is what was delivered); accepted, kwh is the whole delivery'),
      hold: z
        .object({ reason: z.enum(['connection_capacity']), status: z.enum(['held', 'accepted', 'rejected']) })
        .nullable()
        .describe('the capacity hold of the month, as the admin API shows it: held waits for the operator; null when within capacity'),
    }),
  ),
});

export const ErePositionsResponse = z.object({
  positions: z.array(CpoPositionSchema),
  limit: z.number().int(),
  offset: z.number().int(),
  count: z.number().int(),
});
