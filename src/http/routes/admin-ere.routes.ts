// Admin API, energy part (C5.3): the review of delivered months and the ERE ledger (sales, allocations,
// payable, payouts). Enabled only with ADMIN_TOKEN.
import { z } from 'zod';
import { allocateToSale, createSale, listSales, markPayable, recordPayout } from '../../domain/ere/ledger.ts';
import { listEnergyMonths, reviewMonth } from '../../domain/ere/review.ts';
import { listAllocations, listPayouts } from '../../domain/ere/ledger-reads.ts';
import type { RouteRegistrar } from '../types.ts';
import { errorOf } from '../../../schemas/http/onboarding-common.ts';
import { AdminPageFields, AdminPageQuery } from '../../../schemas/http/common.ts';

const Err = z.object({ error: z.string(), detail: z.string().optional() }).loose();
const admin = { auth: { admin: true } } as const;
const tags = ['Admin'];
const errors = { 400: errorOf('invalid_request'), 401: Err };
const Decimal = z.union([z.number(), z.string()]);

const Payout = z.object({
  payout_id: z.string(),
  account_id: z.string(),
  paid_to: z.enum(['customer', 'partner']),
  partner_id: z.string().nullable(),
  ere: z.number(),
  net_eur: z.number(),
  allocation_ids: z.array(z.string()),
  paid_at: z.string(),
});

export const EnergyMonthSchema = z.object({
  id: z.string(),
  connection_id: z.string(),
  month: z.string(),
  kwh: z.number(),
  sessions: z.number().int(),
  source: z.enum(['cpo', 'ocpp']),
  status: z.enum(['delivered', 'in_review', 'registered', 'rejected']),
  ere: z.number().nullable(),
  registered_at: z.string().nullable(),
  review_note: z.string().nullable(),
  held_kwh: z.number(),
  hold: z.object({ reason: z.enum(['connection_capacity']), status: z.enum(['held', 'accepted', 'rejected']) }).nullable(),
});

const Sale = z.object({
  sale_id: z.string(),
  quarter: z.string(),
  ere: z.number(),
  price_per_ere: z.number(),
  allocated_ere: z.number(),
  note: z.string().nullable(),
  created_at: z.string(),
});

const Allocation = z.object({
  allocation_id: z.string(),
  sale_id: z.string(),
  account_id: z.string(),
  compliance_year: z.number().int(),
  quarter: z.string(),
  ere: z.number(),
  price_per_ere: z.number(),
  fee_pct: z.number(),
  net_eur: z.number(),
  status: z.enum(['reserved', 'payable', 'paid']),
  payout_id: z.string().nullable(),
});

export const adminEreRoutes: RouteRegistrar = (app, deps) => {
  app.get(
    '/admin/energy-months',
    {
      config: admin,
      schema: {
        tags,
        summary:
          'Monthly energy records, filtered by status, connection, month or hold (hold_status=held: the months waiting for a decision), a page at a time (limit 1–1000, default 100; offset)',
        querystring: z.object({
          status: z.enum(['delivered', 'in_review', 'registered', 'rejected']).optional(),
          hold_status: z.enum(['held', 'accepted', 'rejected']).optional(),
          connection_id: z.uuid().optional(),
          month: z.string().regex(/^\d{4}-(0[1-9]|1[0-2])$/).optional(),
          ...AdminPageQuery,
        }),
        response: {
          200: z.object({
            energy_months: z.array(EnergyMonthSchema).describe('ordered by month, then when the record was made, then id'),
            ...AdminPageFields,
          }),
          ...errors,
        },
      },
    },
    async (req) => listEnergyMonths(deps, req.query),
  );

  app.post(
    '/admin/energy-months/:id/review',
    {
      config: admin,
      schema: {
        tags,
        summary:
          'Review step on a month: start (delivered → in_review), register (in_review → registered; 409 energy_held while a capacity hold is open, month_not_covered for a month that ended before the machtiging), reject; accept_held / reject_held decide a capacity hold (the excess counts / never counts)',
        params: z.object({ id: z.string() }),
        body: z.object({ action: z.enum(['start', 'register', 'reject', 'accept_held', 'reject_held']), note: z.string().max(500).optional() }),
        response: {
          200: EnergyMonthSchema,
          ...errors,
          404: errorOf('energy_month_not_found'),
          409: errorOf('invalid_transition', 'energy_held', 'account_not_eligible', 'month_not_covered'),
        },
      },
    },
    async (req) => reviewMonth(deps, req.params.id, req.body),
  );

  app.post(
    '/admin/ere/sales',
    {
      config: admin,
      schema: {
        tags,
        summary: "Record an ERE sale: quarter ('2026-Q3'), ERE and price per ERE (3 decimals)",
        body: z.object({ quarter: z.string(), ere: Decimal, price_per_ere: Decimal, note: z.string().max(500).optional() }),
        response: { 201: Sale, ...errors },
      },
    },
    async (req, reply) => reply.code(201).send(await createSale(deps, req.body)),
  );

  app.get(
    '/admin/ere/sales',
    { config: admin, schema: { tags, summary: 'ERE sales with the ERE allocated to each', response: { 200: z.object({ sales: z.array(Sale) }), 401: Err } } },
    async () => ({ sales: await listSales(deps) }),
  );

  app.post(
    '/admin/ere/sales/:sale_id/allocations',
    {
      config: admin,
      schema: {
        tags,
        summary: "Allocate an account's registered, unallocated ERE to a sale (reserved)",
        params: z.object({ sale_id: z.string() }),
        body: z.object({ account_id: z.string(), ere: Decimal }),
        response: {
          201: Allocation,
          ...errors,
          404: errorOf('sale_not_found', 'account_not_found'),
          409: errorOf('sale_exceeded', 'insufficient_registered_ere'),
        },
      },
    },
    async (req, reply) => reply.code(201).send(await allocateToSale(deps, req.params.sale_id, req.body)),
  );

  app.get(
    '/admin/ere/allocations',
    {
      config: admin,
      schema: {
        tags,
        summary: 'ERE allocations, of a sale, an account or a status, oldest first, a page at a time (limit 1–1000, default 100; offset)',
        querystring: z.object({
          sale_id: z.uuid().optional(),
          account_id: z.uuid().optional(),
          status: z.enum(['reserved', 'payable', 'paid']).optional(),
          ...AdminPageQuery,
        }),
        response: {
          200: z.object({
            allocations: z.array(
              Allocation.extend({ created_at: z.string(), payable_at: z.string().nullable(), paid_at: z.string().nullable() }),
            ).describe('ordered by when each was made, then id'),
            ...AdminPageFields,
          }),
          ...errors,
        },
      },
    },
    async (req) => listAllocations(deps, req.query),
  );

  app.post(
    '/admin/ere/allocations/:allocation_id/payable',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Release a reserved allocation for payout (reserved → payable)',
        params: z.object({ allocation_id: z.string() }),
        response: { 200: Allocation, ...errors, 404: errorOf('allocation_not_found'), 409: errorOf('invalid_transition') },
      },
    },
    async (req) => markPayable(deps, req.params.allocation_id),
  );

  app.post(
    '/admin/ere/payouts',
    {
      config: admin,
      schema: {
        tags,
        summary: "Pay out an account's payable allocations (to the partner for via_cpo_invoicing accounts)",
        body: z.object({ account_id: z.string(), reference: z.string().max(200).optional() }),
        response: {
          // D143: the same reference again for the account: the earlier payout, 200 and `replayed`
          200: Payout.extend({ replayed: z.literal(true) }),
          201: Payout,
          ...errors,
          404: errorOf('account_not_found'),
          409: errorOf('nothing_payable'),
        },
      },
    },
    async (req, reply) => {
      const p = await recordPayout(deps, req.body);
      return reply.code(p.replayed ? 200 : 201).send(p);
    },
  );

  app.get(
    '/admin/ere/payouts',
    {
      config: admin,
      schema: {
        tags,
        summary: "Payouts, of an account or under a reference, newest first, with their allocations, a page at a time (limit 1–1000, default 100; offset)",
        querystring: z.object({ account_id: z.uuid().optional(), reference: z.string().max(200).optional(), ...AdminPageQuery }),
        response: {
          200: z.object({
            payouts: z.array(Payout.extend({ reference: z.string().nullable() })).describe('ordered by when each was paid, newest first, then id'),
            ...AdminPageFields,
          }),
          ...errors,
        },
      },
    },
    async (req) => listPayouts(deps, req.query),
  );
};
