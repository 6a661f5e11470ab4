// C6.5 GET /energy (Personal).
import { z } from 'zod';

export const EnergyMonth = z.object({
  month: z.string(),
  kwh: z.number(),
  ere_credits: z.number(),
  sessions: z.number().int(),
  kwh_all: z.number(),
  sessions_all: z.number().int(),
});

export const EnergyResponse = z.object({
  total_kwh: z.number(),
  total_ere_credits: z.number(),
  total_sessions: z.number().int(),
  total_kwh_all: z.number(),
  total_sessions_all: z.number().int(),
  months: z.array(EnergyMonth),
});
