// Spec §2 "ERE position" (GET /ere-position).
import { z } from 'zod';

/** The first compliance year (spec: `year` >= 2026): no ERE exist for energy before it, so no month before it is taken. */
export const FIRST_COMPLIANCE_YEAR = 2026;

const Money = z.object({ ere: z.number(), net_eur: z.number(), price_per_ere: z.number() });

export const ErePositionQuery = z.object({
  year: z.coerce.number().int().min(FIRST_COMPLIANCE_YEAR).max(9999).optional(),
});

export const ErePositionResponse = z.object({
  compliance_year: z.number().int(),
  effective_fee_pct: z.number(),
  indicative_price_per_ere: z.number(),
  allocatable_ere: z.number(),
  allocatable_kwh: z.number(),
  pending_ere: z.number(),
  pending_kwh: z.number(),
  pending_forecast_net_eur: z.number(),
  pending_sessions: z.number().int(),
  pending_ready_at: z.string().nullable().describe('Europe/Amsterdam offset, e.g. 2026-12-15T00:00:00+01:00'),
  realized_avg_price: z.number(),
  paid: Money,
  payable: Money,
  reserved: Money,
  unsold: z.object({
    ere: z.number(),
    forecast_net_eur: z.number(),
    ytd_ere: z.number(),
    ytd_forecast_net_eur: z.number(),
    future_ere: z.number(),
    future_forecast_net_eur: z.number(),
  }),
  forecast_confidence: z.enum(['none', 'low', 'medium', 'high']),
  forecast_is_projected: z.boolean(),
  forecast_history_days: z.number().int(),
  forecast_rate_floored: z.boolean(),
  forecast_pace_total_eur: z.number().nullable(),
  ytd_expected_eur: z.number(),
  total_expected_eur: z.number(),
  quarters: z.array(z.object({ quarter: z.string(), ere: z.number(), sold_ere: z.number(), price_per_ere: z.number() })),
});
