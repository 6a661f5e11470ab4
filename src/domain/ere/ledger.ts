// C5.3 ERE ledger: the operator's records. A sale (quarter, ERE, price per ERE); registered ERE of an account
// allocated to a sale (reserved); allocations released for payout (payable); payouts (paid). The fee is fixed on
// the allocation: the account's fee_pct, else its partner's, else ERE_FEE_PCT. A via_cpo_invoicing account is
// settled to its partner, never paid to the customer.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { formatDec, toDec } from '../../lib/decimal.ts';
import { DomainError } from '../errors.ts';
import { isoUtc } from '../../lib/amsterdam-time.ts';
import { netCents } from './amounts.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A decimal input for a numeric(`precision`, `scale`) column, in units of its last digit. Judged before any statement:
 * a number from 1e21 on has no plain decimal text, and a value past the column's precision failed the insert as a 500.
 */
function decimalInput(v: unknown, scale: number, field: string, opts: { positive: boolean; precision: number }): bigint {
  const ok = (typeof v === 'number' && Number.isFinite(v) && Math.abs(v) < 1e21) || (typeof v === 'string' && /^\d{1,40}(\.\d{1,40})?$/.test(v.trim()));
  if (!ok) throw new DomainError('invalid_request', `${field} must be a decimal number`);
  const units = toDec(v as string | number, scale);
  // money and ERE as written, never rounded on the way in (D118): a digit past the column's scale is refused (the
  // comparison at 12 more digits lets a binary float's tail, 0.30000000000000004, pass as what was meant)
  if (toDec(v as string | number, scale + 12) !== units * 10n ** 12n) {
    throw new DomainError('invalid_request', `${field} has at most ${scale} decimals`);
  }
  if (units < 0n || (opts.positive && units === 0n)) throw new DomainError('invalid_request', `${field} must be ${opts.positive ? '> 0' : '≥ 0'}`);
  const limit = 10n ** BigInt(opts.precision);
  if (units >= limit) throw new DomainError('invalid_request', `${field} must be under ${formatDec(limit, scale)}`);
  return units;
}

export interface SaleView {
  sale_id: string;
  quarter: string;
  ere: number;
  price_per_ere: number;
  allocated_ere: number;
  note: string | null;
  created_at: string;
}

export async function createSale(
  deps: Deps,
  input: { quarter: unknown; ere: unknown; price_per_ere: unknown; note?: string | undefined },
): Promise<SaleView> {
  if (typeof input.quarter !== 'string' || !/^\d{4}-Q[1-4]$/.test(input.quarter)) {
    throw new DomainError('invalid_request', "quarter must look like '2026-Q3'");
  }
  const ere = decimalInput(input.ere, 2, 'ere', { positive: true, precision: 14 });
  const price = decimalInput(input.price_per_ere, 3, 'price_per_ere', { positive: false, precision: 10 });
  const row = await deps.db
    .insertInto('ere_sales')
    .values({ quarter: input.quarter, ere: formatDec(ere, 2), price_per_ere: formatDec(price, 3), note: input.note ?? null, created_at: deps.clock() })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { sale_id: row.id, quarter: row.quarter, ere: Number(row.ere), price_per_ere: Number(row.price_per_ere), allocated_ere: 0, note: row.note, created_at: isoUtc(row.created_at) };
}

export async function listSales(deps: Deps): Promise<SaleView[]> {
  const rows = await deps.db
    .selectFrom('ere_sales as s')
    .selectAll('s')
    .select(sql<string>`coalesce((select sum(al.ere) from ere_allocations al where al.sale_id = s.id), 0)`.as('allocated'))
    .orderBy('s.created_at')
    .execute();
  return rows.map((r) => ({
    sale_id: r.id, quarter: r.quarter, ere: Number(r.ere), price_per_ere: Number(r.price_per_ere),
    allocated_ere: Number(r.allocated), note: r.note, created_at: isoUtc(r.created_at),
  }));
}

export interface AllocationView {
  allocation_id: string;
  sale_id: string;
  account_id: string;
  compliance_year: number;
  quarter: string;
  ere: number;
  price_per_ere: number;
  fee_pct: number;
  net_eur: number;
  status: 'reserved' | 'payable' | 'paid';
  payout_id: string | null;
}

async function allocationView(deps: Deps, id: string): Promise<AllocationView> {
  const r = await deps.db
    .selectFrom('ere_allocations as al')
    .innerJoin('ere_sales as s', 's.id', 'al.sale_id')
    .select(['al.id', 'al.sale_id', 'al.account_id', 'al.compliance_year', 'al.ere', 'al.fee_pct', 'al.status', 'al.payout_id', 's.quarter', 's.price_per_ere'])
    .where('al.id', '=', id)
    .executeTakeFirstOrThrow();
  return allocationOf(r);
}

/** An allocation row (with its sale's quarter and price) as the admin API shows it; its net from the decimals. */
export function allocationOf(r: {
  id: string; sale_id: string; account_id: string; compliance_year: number; ere: string; fee_pct: string;
  status: AllocationView['status']; payout_id: string | null; quarter: string; price_per_ere: string;
}): AllocationView {
  return {
    allocation_id: r.id, sale_id: r.sale_id, account_id: r.account_id, compliance_year: r.compliance_year, quarter: r.quarter,
    ere: Number(r.ere), price_per_ere: Number(r.price_per_ere), fee_pct: Number(r.fee_pct),
    net_eur: Number(formatDec(netCents(toDec(r.ere, 2), toDec(r.price_per_ere, 3), toDec(r.fee_pct, 2)), 2)),
    status: r.status, payout_id: r.payout_id,
  };
}

/** The fee (percent) that applies to an account: its own, else its partner's agreement, else ERE_FEE_PCT. */
export async function accountFeePct(deps: Deps, accountId: string): Promise<string> {
  const r = await deps.db
    .selectFrom('accounts as a')
    .leftJoin('partners as p', 'p.id', 'a.partner_id')
    .select(sql<string | null>`coalesce(a.fee_pct, p.fee_pct)`.as('fee'))
    .where('a.id', '=', accountId)
    .executeTakeFirst();
  return r?.fee ?? deps.config.ERE_FEE_PCT;
}

/**
 * The fee that applies to a user's figures (Personal API estimates and forecasts): that of the user's first
 * account (its own, else its partner's agreement), else ERE_FEE_PCT. One rule for /sessions and /ere-position.
 */
export async function userFeePct(deps: Deps, userId: string): Promise<string> {
  const r = await deps.db
    .selectFrom('accounts as a')
    .leftJoin('partners as p', 'p.id', 'a.partner_id')
    .select(sql<string | null>`coalesce(a.fee_pct, p.fee_pct)`.as('fee'))
    .where('a.owner_user_id', '=', userId)
    .orderBy('a.created_at')
    .orderBy('a.id')
    .executeTakeFirst();
  return r?.fee ?? deps.config.ERE_FEE_PCT;
}

/** Registered ERE of an account in a compliance year (months of that year), scale 2. */
export async function registeredEreUnits(deps: Deps, accountId: string, year: number): Promise<bigint> {
  const r = await sql<{ ere: string }>`select coalesce(sum(em.ere), 0)::text as ere from energy_months em
    join connections c on c.id = em.connection_id
    where c.account_id = ${accountId} and em.status = 'registered' and em.month like ${`${year}-%`}`.execute(deps.db);
  return toDec(r.rows[0]?.ere ?? '0', 2);
}

/** Reserve registered, not yet allocated ERE of an account for a sale. */
export async function allocateToSale(deps: Deps, saleId: string, input: { account_id: unknown; ere: unknown }): Promise<AllocationView> {
  const ere = decimalInput(input.ere, 2, 'ere', { positive: true, precision: 14 });
  if (!UUID.test(saleId)) throw new DomainError('sale_not_found', `no sale ${saleId}`);
  if (typeof input.account_id !== 'string' || !UUID.test(input.account_id)) throw new DomainError('account_not_found', 'no such account');
  const accountId = input.account_id;
  const id = await deps.db.transaction().execute(async (trx) => {
    const d = { ...deps, db: trx };
    const sale = await trx.selectFrom('ere_sales').selectAll().where('id', '=', saleId).forUpdate().executeTakeFirst();
    if (!sale) throw new DomainError('sale_not_found', `no sale ${saleId}`);
    const acc = await trx.selectFrom('accounts').select('id').where('id', '=', accountId).forUpdate().executeTakeFirst();
    if (!acc) throw new DomainError('account_not_found', `no account ${accountId}`);
    const year = Number(sale.quarter.slice(0, 4));
    const sums = await sql<{ sale_alloc: string; acc_alloc: string }>`select
        coalesce((select sum(ere) from ere_allocations where sale_id = ${saleId}), 0)::text as sale_alloc,
        coalesce((select sum(ere) from ere_allocations where account_id = ${accountId} and compliance_year = ${year}), 0)::text as acc_alloc`.execute(trx);
    const saleLeft = toDec(sale.ere, 2) - toDec(sums.rows[0]!.sale_alloc, 2);
    if (ere > saleLeft) throw new DomainError('sale_exceeded', `the sale has ${formatDec(saleLeft, 2)} ERE left to allocate`);
    const accLeft = (await registeredEreUnits(d, accountId, year)) - toDec(sums.rows[0]!.acc_alloc, 2);
    if (ere > accLeft) {
      throw new DomainError('insufficient_registered_ere', `the account has ${formatDec(accLeft, 2)} registered ERE of ${year} not yet allocated`);
    }
    const fee = await accountFeePct(d, accountId);
    const row = await trx
      .insertInto('ere_allocations')
      .values({ sale_id: saleId, account_id: accountId, compliance_year: year, ere: formatDec(ere, 2), fee_pct: formatDec(toDec(fee, 2), 2), created_at: deps.clock() })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  });
  return allocationView(deps, id);
}

/** reserved → payable (the buyer paid; the account's share can be paid out). */
export async function markPayable(deps: Deps, allocationId: string): Promise<AllocationView> {
  if (!UUID.test(allocationId)) throw new DomainError('allocation_not_found', `no allocation ${allocationId}`);
  const cur = await deps.db.selectFrom('ere_allocations').select('status').where('id', '=', allocationId).executeTakeFirst();
  if (!cur) throw new DomainError('allocation_not_found', `no allocation ${allocationId}`);
  if (cur.status === 'reserved') {
    await deps.db.updateTable('ere_allocations').set({ status: 'payable', payable_at: deps.clock() }).where('id', '=', allocationId).where('status', '=', 'reserved').execute();
  } else if (cur.status !== 'payable') {
    throw new DomainError('invalid_transition', `a ${cur.status} allocation cannot become payable`);
  }
  return allocationView(deps, allocationId);
}

export interface PayoutView {
  payout_id: string;
  account_id: string;
  paid_to: 'customer' | 'partner';
  partner_id: string | null;
  ere: number;
  net_eur: number;
  allocation_ids: string[];
  paid_at: string;
}

/**
 * Pay out every payable allocation of an account: to the customer, or to the partner (via_cpo_invoicing). D143: a
 * payout with a `reference` the account already has a payout under is a retry (the answer to the first was lost): the
 * earlier payout is answered again, `replayed`, and nothing is paid twice.
 */
export async function recordPayout(deps: Deps, input: { account_id: unknown; reference?: string | undefined }): Promise<PayoutView & { replayed?: true }> {
  if (typeof input.account_id !== 'string' || !UUID.test(input.account_id)) throw new DomainError('account_not_found', 'no such account');
  const accountId = input.account_id;
  return deps.db.transaction().execute(async (trx) => {
    const acc = await trx.selectFrom('accounts').select(['id', 'payout_handler', 'partner_id']).where('id', '=', accountId).forUpdate().executeTakeFirst();
    if (!acc) throw new DomainError('account_not_found', `no account ${accountId}`);
    if (input.reference) {
      const earlier = await trx.selectFrom('ere_payouts').selectAll().where('account_id', '=', accountId).where('reference', '=', input.reference).executeTakeFirst();
      if (earlier) {
        const ids = await trx.selectFrom('ere_allocations').select('id').where('payout_id', '=', earlier.id).orderBy('created_at').execute();
        return {
          payout_id: earlier.id, account_id: accountId, paid_to: earlier.paid_to, partner_id: earlier.partner_id,
          ere: Number(earlier.ere), net_eur: Number(formatDec(BigInt(earlier.net_cents), 2)), allocation_ids: ids.map((a) => a.id),
          paid_at: isoUtc(earlier.paid_at), replayed: true as const,
        };
      }
    }
    const allocs = await trx
      .selectFrom('ere_allocations as al')
      .innerJoin('ere_sales as s', 's.id', 'al.sale_id')
      .select(['al.id', 'al.ere', 'al.fee_pct', 's.price_per_ere'])
      .where('al.account_id', '=', accountId)
      .where('al.status', '=', 'payable')
      .orderBy('al.created_at')
      .execute();
    if (allocs.length === 0) throw new DomainError('nothing_payable', 'the account has no payable ERE');
    let ere = 0n;
    let cents = 0n;
    for (const a of allocs) {
      ere += toDec(a.ere, 2);
      cents += netCents(toDec(a.ere, 2), toDec(a.price_per_ere, 3), toDec(a.fee_pct, 2));
    }
    const toPartner = acc.payout_handler === 'via_cpo_invoicing';
    const now = deps.clock();
    const payout = await trx
      .insertInto('ere_payouts')
      .values({
        account_id: accountId,
        paid_to: toPartner ? 'partner' : 'customer',
        partner_id: toPartner ? acc.partner_id : null,
        ere: formatDec(ere, 2),
        net_cents: cents.toString(),
        reference: input.reference ?? null,
        paid_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await trx
      .updateTable('ere_allocations')
      .set({ status: 'paid', paid_at: now, payout_id: payout.id })
      .where('id', 'in', allocs.map((a) => a.id))
      .execute();
    return {
      payout_id: payout.id, account_id: accountId, paid_to: payout.paid_to, partner_id: payout.partner_id,
      ere: Number(formatDec(ere, 2)), net_eur: Number(formatDec(cents, 2)), allocation_ids: allocs.map((a) => a.id), paid_at: isoUtc(now),
    };
  });
}

/** The ERE allocations of these accounts in a compliance year, with their sale's price and quarter. */
export async function yearAllocations(deps: Deps, accountIds: string[], year: number) {
  if (accountIds.length === 0) return [];
  return deps.db
    .selectFrom('ere_allocations as al')
    .innerJoin('ere_sales as s', 's.id', 'al.sale_id')
    .select(['al.account_id', 'al.ere', 'al.fee_pct', 'al.status', 's.price_per_ere', 's.quarter'])
    .where('al.account_id', 'in', accountIds)
    .where('al.compliance_year', '=', year)
    .execute();
}
