// Spec §2 "ERE position" (GET /ere-position): a view over the ledger (C5.3) for the user's accounts
// (accounts.owner_user_id) in one compliance year. Every formula is written out in docs/ere-position.md. Only the
// months that count (ere/counting.ts monthCountsSql, C5.4) enter the figures.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { divRound, formatDec, toDec } from '../../lib/decimal.ts';
import { dateOf, daysBetweenDates, isoAmsterdam, quarterOfMonth } from '../../lib/amsterdam-time.ts';
import { avgPrice, ereForKwhUnits, netCents } from './amounts.ts';
import { monthCountsSql } from './counting.ts';
import { reviewDueAt } from './review.ts';
import { userFeePct, yearAllocations } from './ledger.ts';

/** Below this many days of history the pace is taken over this many days (forecast_rate_floored). */
export const FORECAST_MIN_DAYS = 30;

export interface Money3 {
  ere: number;
  net_eur: number;
  price_per_ere: number;
}

export interface ErePosition {
  compliance_year: number;
  effective_fee_pct: number;
  indicative_price_per_ere: number;
  allocatable_ere: number;
  allocatable_kwh: number;
  pending_ere: number;
  pending_kwh: number;
  pending_forecast_net_eur: number;
  pending_sessions: number;
  pending_ready_at: string | null;
  realized_avg_price: number;
  paid: Money3;
  payable: Money3;
  reserved: Money3;
  unsold: {
    ere: number;
    forecast_net_eur: number;
    ytd_ere: number;
    ytd_forecast_net_eur: number;
    future_ere: number;
    future_forecast_net_eur: number;
  };
  forecast_confidence: 'none' | 'low' | 'medium' | 'high';
  forecast_is_projected: boolean;
  forecast_history_days: number;
  forecast_rate_floored: boolean;
  forecast_pace_total_eur: number | null;
  ytd_expected_eur: number;
  total_expected_eur: number;
  quarters: { quarter: string; ere: number; sold_ere: number; price_per_ere: number }[];
}

const n2 = (u: bigint) => Number(formatDec(u, 2));
const n3 = (u: bigint) => Number(formatDec(u, 3));

interface Bucket {
  ere: bigint;
  gross5: bigint;
  cents: bigint;
}
const bucket = (): Bucket => ({ ere: 0n, gross5: 0n, cents: 0n });
const money = (b: Bucket): Money3 => ({ ere: n2(b.ere), net_eur: n2(b.cents), price_per_ere: n3(avgPrice(b.gross5, b.ere)) });

export async function erePositionForUser(deps: Deps, userId: string, year: number): Promise<ErePosition> {
  const cfg = deps.config;
  const accounts = await deps.db
    .selectFrom('accounts as a')
    .select(['a.id'])
    .where('a.owner_user_id', '=', userId)
    .orderBy('a.created_at')
    .orderBy('a.id')
    .execute();
  const accountIds = accounts.map((a) => a.id);
  // Forecasts use one fee: the user's first account's (its own, else its partner's, else ERE_FEE_PCT).
  const fee = toDec(await userFeePct(deps, userId), 2);
  const price = toDec(cfg.ERE_INDICATIVE_PRICE_EUR, 3);

  const months = accountIds.length
    ? await sql<{ month: string; kwh: string; sessions: number; status: string; ere: string | null }>`
        select em.month, em.kwh, em.sessions, em.status, em.ere from energy_months em
        join connections c on c.id = em.connection_id
        join accounts a on a.id = c.account_id
        where c.account_id in (${sql.join(accountIds)}) and em.month like ${`${year}-%`} and ${monthCountsSql()}
        order by em.month`.execute(deps.db).then((r) => r.rows)
    : [];
  const allocs = await yearAllocations(deps, accountIds, year);

  // Registered and pending energy of the year.
  let registeredEre = 0n;
  let registeredKwh = 0n;
  let pendingKwh = 0n;
  // the estimate month by month, as each month will be booked (rounded to 2 decimals on its own) and as GET /energy
  // and GET /v1/ere-positions show it: rounding the year's sum once could differ from their sum by a few hundredths
  let pendingEre = 0n;
  let pendingSessions = 0;
  let ytdKwh = 0n;
  let firstMonth: string | null = null;
  let readyAt: Date | null = null;
  const qEre = new Map<string, bigint>();
  for (const m of months) {
    if (m.status === 'rejected') continue;
    const kwh = toDec(m.kwh, 2);
    ytdKwh += kwh;
    firstMonth ??= m.month;
    if (m.status === 'registered') {
      const e = toDec(m.ere ?? '0', 2);
      registeredEre += e;
      registeredKwh += kwh;
      const q = quarterOfMonth(m.month);
      qEre.set(q, (qEre.get(q) ?? 0n) + e);
    } else {
      pendingKwh += kwh;
      pendingEre += ereForKwhUnits(cfg, year, kwh);
      pendingSessions += m.sessions;
      const due = reviewDueAt(m.month, cfg.ERE_REVIEW_DAYS);
      if (!readyAt || due > readyAt) readyAt = due;
    }
  }

  // The ledger: reserved → payable → paid, each allocation at its sale's price and its own fee.
  const by: Record<'reserved' | 'payable' | 'paid', Bucket> = { reserved: bucket(), payable: bucket(), paid: bucket() };
  const all = bucket();
  const qSold = new Map<string, Bucket>();
  for (const a of allocs) {
    const e = toDec(a.ere, 2);
    const p = toDec(a.price_per_ere, 3);
    const c = netCents(e, p, toDec(a.fee_pct, 2));
    for (const b of [by[a.status], all, qSold.get(a.quarter) ?? qSold.set(a.quarter, bucket()).get(a.quarter)!]) {
      b.ere += e;
      b.gross5 += e * p;
      b.cents += c;
    }
  }
  const allocatableEre = registeredEre - all.ere;
  // the registered kWh not yet allocated, pro rata to the ERE: exactly the registered kWh while nothing is sold
  // (worked back from the rounded ERE it would lose up to half a hundredth of an ERE's worth)
  const allocatableKwh = registeredEre > 0n ? divRound(registeredKwh * allocatableEre, registeredEre) : 0n;

  // Pace: the year's delivered kWh over the days since its first month began (Amsterdam calendar days).
  const today = dateOf(deps.clock());
  const yearStart = `${year}-01-01`;
  const nextYear = `${year + 1}-01-01`;
  const end = today < yearStart ? yearStart : today > nextYear ? nextYear : today;
  const hasHistory = firstMonth !== null && ytdKwh > 0n;
  const historyDays = firstMonth !== null ? Math.max(0, daysBetweenDates(`${firstMonth}-01`, end)) : 0;
  const denom = BigInt(Math.max(historyDays, FORECAST_MIN_DAYS));
  const remainingDays = BigInt(Math.max(0, daysBetweenDates(end, nextYear)));
  const daysInYear = BigInt(daysBetweenDates(yearStart, nextYear));
  const futureKwh = hasHistory ? divRound(ytdKwh * remainingDays, denom) : 0n;
  const futureEre = ereForKwhUnits(cfg, year, futureKwh);
  const paceEre = hasHistory ? ereForKwhUnits(cfg, year, divRound(ytdKwh * daysInYear, denom)) : null;

  const ytdEre = allocatableEre + pendingEre;
  const ytdForecast = netCents(ytdEre, price, fee);
  const futureForecast = netCents(futureEre, price, fee);
  const realized = by.reserved.cents + by.payable.cents + by.paid.cents;
  const ytdExpected = realized + ytdForecast;

  return {
    compliance_year: year,
    effective_fee_pct: n2(fee),
    indicative_price_per_ere: n3(price),
    allocatable_ere: n2(allocatableEre),
    allocatable_kwh: n2(allocatableKwh),
    pending_ere: n2(pendingEre),
    pending_kwh: n2(pendingKwh),
    pending_forecast_net_eur: n2(netCents(pendingEre, price, fee)),
    pending_sessions: pendingSessions,
    pending_ready_at: readyAt ? isoAmsterdam(readyAt) : null,
    realized_avg_price: n3(avgPrice(all.gross5, all.ere)),
    paid: money(by.paid),
    payable: money(by.payable),
    reserved: money(by.reserved),
    unsold: {
      ere: n2(ytdEre + futureEre),
      forecast_net_eur: n2(ytdForecast + futureForecast),
      ytd_ere: n2(ytdEre),
      ytd_forecast_net_eur: n2(ytdForecast),
      future_ere: n2(futureEre),
      future_forecast_net_eur: n2(futureForecast),
    },
    forecast_confidence: !hasHistory ? 'none' : historyDays >= 90 ? 'high' : historyDays >= FORECAST_MIN_DAYS ? 'medium' : 'low',
    forecast_is_projected: hasHistory && remainingDays > 0n,
    forecast_history_days: hasHistory ? historyDays : 0,
    forecast_rate_floored: hasHistory && historyDays < FORECAST_MIN_DAYS,
    forecast_pace_total_eur: paceEre === null ? null : n2(netCents(paceEre, price, fee)),
    ytd_expected_eur: n2(ytdExpected),
    total_expected_eur: n2(ytdExpected + futureForecast),
    quarters: [1, 2, 3, 4].map((i) => {
      const q = `${year}-Q${i}`;
      const s = qSold.get(q) ?? bucket();
      return { quarter: q, ere: n2(qEre.get(q) ?? 0n), sold_ere: n2(s.ere), price_per_ere: n3(avgPrice(s.gross5, s.ere)) };
    }),
  };
}
