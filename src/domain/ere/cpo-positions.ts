// C2.5 GET /v1/ere-positions: one position per account of the caller's partner (accounts created through the
// CPO API, as GET /v1/accounts), for one compliance year. count is the total matching the filter (C6.2).
// payout_handler is respected: a via_cpo_invoicing account is settled to the partner (settled_to 'partner'),
// never paid to the customer. Month kWh are what was delivered; pending kWh and ERE only what counts
// (ere/counting.ts monthCountsSql, C5.4: a delivered month of an archived connection or an ineligible account waits).
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { yearAllocations } from './ledger.ts';
import { formatDec, toDec } from '../../lib/decimal.ts';
import { eligibleSql } from '../accounts/eligibility.ts';
import { normaliseExternalRef } from '../accounts/external-ref.ts';
import { monthCountsSql } from './counting.ts';
import type { PayoutHandler } from '../../db/tables/core.ts';
import { ereForKwhUnits, netCents } from './amounts.ts';
import { deliveredUnits, whToKwhUnits, type HoldStatus } from './capacity.ts';

export interface CpoPosition {
  account_id: string;
  cpo_external_ref: string | null;
  compliance_year: number;
  ere_eligible: boolean;
  payout_handler: PayoutHandler;
  settled_to: 'customer' | 'partner';
  delivered_kwh: number;
  pending_kwh: number;
  registered_kwh: number;
  registered_ere: number;
  payable_net_eur: number;
  paid_net_eur: number;
  months: { month: string; kwh: number; status: 'delivered' | 'in_review' | 'registered' | 'rejected'; ere: number; held_kwh: number; hold: { reason: 'connection_capacity'; status: HoldStatus } | null }[];
}

export async function listCpoErePositions(
  deps: Deps,
  partnerId: string,
  q: { year: number; limit: number; offset: number; cpo_external_ref?: string | undefined },
): Promise<{ positions: CpoPosition[]; limit: number; offset: number; count: number }> {
  let base = deps.db
    .selectFrom('accounts as a')
    .where('a.partner_id', '=', partnerId)
    .where('a.access_channel', '=', 'cpo_api');
  if (q.cpo_external_ref !== undefined) base = base.where('a.cpo_external_ref', '=', normaliseExternalRef(q.cpo_external_ref));
  const total = await base.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
  const accounts = await base
    .select(['a.id', 'a.cpo_external_ref', 'a.payout_handler', eligibleSql('a').as('eligible')])
    .orderBy('a.created_at')
    .orderBy('a.id')
    .limit(q.limit)
    .offset(q.offset)
    .execute();
  const ids = accounts.map((a) => a.id);
  const months = ids.length
    ? await sql<{ account_id: string; month: string; kwh: string; counted_kwh: string; status: CpoPosition['months'][number]['status']; ere: string | null; held_wh: string; hold_status: HoldStatus | null }>`
        select c.account_id, em.month, sum(em.kwh)::text as kwh, coalesce(sum(em.kwh) filter (where ${monthCountsSql()}), 0)::text as counted_kwh,
               em.status, sum(em.ere)::text as ere,
               coalesce(sum(em.held_wh), 0)::text as held_wh, max(em.hold_status) as hold_status
        from energy_months em join connections c on c.id = em.connection_id join accounts a on a.id = c.account_id
        where c.account_id in (${sql.join(ids)}) and em.month like ${`${q.year}-%`}
        group by c.account_id, em.month, em.status
        order by em.month`.execute(deps.db).then((r) => r.rows)
    : [];
  const allocs = (await yearAllocations(deps, ids, q.year)).filter((al) => al.status === 'payable' || al.status === 'paid');
  const n2 = (u: bigint) => Number(formatDec(u, 2));

  const positions = accounts.map((a): CpoPosition => {
    let delivered = 0n;
    let pending = 0n;
    let regKwh = 0n;
    let regEre = 0n;
    const out: CpoPosition['months'] = [];
    for (const m of months.filter((x) => x.account_id === a.id)) {
      const kwh = toDec(m.kwh, 2);
      // D114: the excess above the connection's capacity, as the admin API shows it; while held or after a
      // rejection it is not in kwh, and the delivered figure takes it back in (what the CPO sent)
      const held = whToKwhUnits(BigInt(m.held_wh));
      let ere = 0n;
      if (m.status !== 'rejected') delivered += deliveredUnits({ kwh: m.kwh, held_wh: m.held_wh, hold_status: m.hold_status });
      if (m.status === 'delivered' || m.status === 'in_review') {
        const counted = toDec(m.counted_kwh, 2);
        pending += counted;
        ere = ereForKwhUnits(deps.config, q.year, counted);
      }
      if (m.status === 'registered') {
        ere = toDec(m.ere ?? '0', 2);
        regKwh += kwh;
        regEre += ere;
      }
      out.push({ month: m.month, kwh: n2(kwh), status: m.status, ere: n2(ere), held_kwh: n2(held), hold: m.hold_status ? { reason: 'connection_capacity', status: m.hold_status } : null });
    }
    let payable = 0n;
    let paid = 0n;
    for (const al of allocs.filter((x) => x.account_id === a.id)) {
      const c = netCents(toDec(al.ere, 2), toDec(al.price_per_ere, 3), toDec(al.fee_pct, 2));
      if (al.status === 'paid') paid += c;
      else payable += c;
    }
    return {
      account_id: a.id,
      cpo_external_ref: a.cpo_external_ref,
      compliance_year: q.year,
      ere_eligible: !!a.eligible,
      payout_handler: a.payout_handler,
      settled_to: a.payout_handler === 'via_cpo_invoicing' ? 'partner' : 'customer',
      delivered_kwh: n2(delivered),
      pending_kwh: n2(pending),
      registered_kwh: n2(regKwh),
      registered_ere: n2(regEre),
      payable_net_eur: n2(payable),
      paid_net_eur: n2(paid),
      months: out,
    };
  });
  return { positions, limit: q.limit, offset: q.offset, count: total.n };
}
