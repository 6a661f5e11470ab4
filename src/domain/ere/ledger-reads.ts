// C5.3 ERE ledger, read back: the operator's allocations and payouts a page at a time. Recording them is
// ledger.ts; these reads answer what the operator needs before the next step (which allocations of a sale are
// still reserved, what an account was paid and when) without SQL.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { formatDec } from '../../lib/decimal.ts';
import { isoUtc } from '../../lib/amsterdam-time.ts';
import { allocationOf, type AllocationView, type PayoutView } from './ledger.ts';

interface Page {
  limit: number;
  offset: number;
}

/** GET /admin/ere/allocations: by sale, account or status; oldest first (when made, then id). */
export async function listAllocations(
  deps: Deps,
  q: Page & { sale_id?: string | undefined; account_id?: string | undefined; status?: AllocationView['status'] | undefined },
): Promise<{ allocations: (AllocationView & { created_at: string; payable_at: string | null; paid_at: string | null })[]; count: number } & Page> {
  const where = sql`(${q.sale_id ?? null}::uuid is null or al.sale_id = ${q.sale_id ?? null})
      and (${q.account_id ?? null}::uuid is null or al.account_id = ${q.account_id ?? null})
      and (${q.status ?? null}::text is null or al.status = ${q.status ?? null})`;
  const c = await sql<{ n: string }>`select count(*) as n from ere_allocations al where ${where}`.execute(deps.db);
  const r = await sql<{
    id: string; sale_id: string; account_id: string; compliance_year: number; ere: string; fee_pct: string;
    status: AllocationView['status']; payout_id: string | null; quarter: string; price_per_ere: string;
    created_at: Date; payable_at: Date | null; paid_at: Date | null;
  }>`select al.id, al.sale_id, al.account_id, al.compliance_year, al.ere, al.fee_pct, al.status, al.payout_id,
      s.quarter, s.price_per_ere, al.created_at, al.payable_at, al.paid_at
    from ere_allocations al join ere_sales s on s.id = al.sale_id
    where ${where} order by al.created_at, al.id limit ${q.limit} offset ${q.offset}`.execute(deps.db);
  return {
    allocations: r.rows.map((a) => ({
      ...allocationOf(a),
      created_at: isoUtc(a.created_at), payable_at: a.payable_at ? isoUtc(a.payable_at) : null, paid_at: a.paid_at ? isoUtc(a.paid_at) : null,
    })),
    limit: q.limit,
    offset: q.offset,
    count: Number(c.rows[0]!.n),
  };
}

/** GET /admin/ere/payouts: an account's (or every) payout with its reference and allocations; newest first. */
export async function listPayouts(
  deps: Deps,
  q: Page & { account_id?: string | undefined; reference?: string | undefined },
): Promise<{ payouts: (PayoutView & { reference: string | null })[]; count: number } & Page> {
  const where = sql`(${q.account_id ?? null}::uuid is null or p.account_id = ${q.account_id ?? null})
      and (${q.reference ?? null}::text is null or p.reference = ${q.reference ?? null})`;
  const c = await sql<{ n: string }>`select count(*) as n from ere_payouts p where ${where}`.execute(deps.db);
  const r = await sql<{
    id: string; account_id: string; paid_to: PayoutView['paid_to']; partner_id: string | null; ere: string;
    net_cents: string; reference: string | null; paid_at: Date; allocation_ids: string[];
  }>`select p.id, p.account_id, p.paid_to, p.partner_id, p.ere, p.net_cents::text as net_cents, p.reference, p.paid_at,
      coalesce((select array_agg(al.id::text order by al.created_at, al.id) from ere_allocations al where al.payout_id = p.id), '{}'::text[]) as allocation_ids
    from ere_payouts p where ${where} order by p.paid_at desc, p.id desc limit ${q.limit} offset ${q.offset}`.execute(deps.db);
  return {
    payouts: r.rows.map((p) => ({
      payout_id: p.id, account_id: p.account_id, paid_to: p.paid_to, partner_id: p.partner_id, ere: Number(p.ere),
      net_eur: Number(formatDec(BigInt(p.net_cents), 2)), allocation_ids: p.allocation_ids, paid_at: isoUtc(p.paid_at), reference: p.reference,
    })),
    limit: q.limit,
    offset: q.offset,
    count: Number(c.rows[0]!.n),
  };
}
