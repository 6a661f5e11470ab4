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

/**
 * Why an item was rejected (C2.4, C6.4; D158: named in the document so a generated client can tell them apart):
 * the item names no connection (target_required), names none of the caller's (connection_not_found), an archived
 * one (connection_not_active) or an account with several (ambiguous_connection); its month is not YYYY-MM of 2026
 * or later (invalid_month) or lies ahead (month_in_future); its kwh is not a number ≥ 0 (invalid_kwh); the month is
 * registered as ERE with another figure (ere_booked); the item is not an object (invalid_request).
 */
export const BATCH_ITEM_ERRORS = [
  'target_required',
  'connection_not_found',
  'connection_not_active',
  'ambiguous_connection',
  'invalid_month',
  'month_in_future',
  'invalid_kwh',
  'ere_booked',
  'invalid_request',
] as const;
export type BatchItemError = (typeof BATCH_ITEM_ERRORS)[number];

export const SessionsBatchResult = z.object({
  index: z.number().int(),
  connection_id: z.string().nullable(),
  month: z.string().nullable(),
  kwh: z.number().nullable(),
  status: z.enum(['created', 'updated', 'unchanged', 'rejected']),
  error: z
    .enum(BATCH_ITEM_ERRORS)
    .optional()
    .describe(
      'with status rejected: target_required (no connection_id, account_id or cpo_external_ref), connection_not_found (none of yours), ' +
        'connection_not_active (archived), ambiguous_connection (the account has several active connections: name the connection), ' +
        'invalid_month (not YYYY-MM, or before 2026), month_in_future, invalid_kwh (not a number ≥ 0), ' +
        'ere_booked (the month is registered as ERE with another figure), invalid_request (the item is not an object)',
    ),
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
