// C2.4 POST /v1/sessions:batch: request and response.
import { z } from 'zod';
import { BATCH_MAX_ITEMS } from '../../src/domain/energy/sessions-batch.ts';

/** Items are checked one by one in the domain (a bad item is rejected, never the whole batch). */
export const SessionsBatchItem = z
  .object({
    connection_id: z.unknown().optional(),
    account_id: z.unknown().optional(),
    cpo_external_ref: z.unknown().optional(),
    month: z.unknown().optional().describe('YYYY-MM, a Europe/Amsterdam calendar month'),
    kwh: z.unknown().optional().describe('number ≥ 0, rounded to 2 decimals'),
  })
  .loose();

/** An item that is not even an object is rejected on its own (invalid_request), never the whole batch. */
export const SessionsBatchBody = z.object({
  items: z.array(z.union([SessionsBatchItem, z.unknown()])).min(1).max(BATCH_MAX_ITEMS),
});

export const SessionsBatchResult = z.object({
  index: z.number().int(),
  connection_id: z.string().nullable(),
  month: z.string().nullable(),
  kwh: z.number().nullable(),
  status: z.enum(['created', 'updated', 'unchanged', 'rejected']),
  error: z.string().optional(),
});

export const SessionsBatchResponse = z.object({
  ok: z.boolean(),
  results: z.array(SessionsBatchResult),
  counts: z.object({
    created: z.number().int(),
    updated: z.number().int(),
    unchanged: z.number().int(),
    rejected: z.number().int(),
  }),
});
