// C2.4 POST /v1/sessions:batch: request and response.
import { z } from 'zod';
import { checkedByDomain, Uuid } from './common.ts';

/** items per request (C2.4) */
export const BATCH_MAX_ITEMS = 1000;

/** The documented shape of one item; the domain checks each item on its own (C2.4: one bad item never fails the others). */
export const SessionsBatchItem = z
  .object({
    connection_id: Uuid.optional().describe('the connection; one of connection_id, account_id, cpo_external_ref'),
    account_id: Uuid.optional().describe('the account, when it has a single active connection'),
    cpo_external_ref: z.string().optional().describe('your customer number, as sent on POST /v1/accounts'),
    month: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/).describe('YYYY-MM, a Europe/Amsterdam calendar month, not in the future'),
    kwh: z.number().min(0).describe('kWh delivered in that month, ≥ 0, rounded to 2 decimals'),
  })
  .describe('one month of one connection');

/** An item of the wrong shape is rejected on its own (invalid_month, invalid_kwh, invalid_request, …), never the whole batch. */
export const SessionsBatchBody = z
  .object({
    items: z.array(checkedByDomain(SessionsBatchItem)).min(1).max(BATCH_MAX_ITEMS).describe(`1 to ${BATCH_MAX_ITEMS} items`),
  })
  .meta({
    examples: [
      {
        items: [
          { cpo_external_ref: 'CUST-10042', month: '2026-10', kwh: 123.4 },
          { cpo_external_ref: 'CUST-10042', month: '2026-09', kwh: 98.75 },
        ],
      },
    ],
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
