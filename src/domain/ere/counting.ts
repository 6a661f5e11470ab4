// C5.4 What counts for ERE, once. Every view (GET /sessions, GET /chargers, GET /energy, GET /ere-position,
// GET /v1/ere-positions) and the monthly aggregation use these functions, so they agree to the Wh:
//
// - Energy counts from the moment the machtiging is in force (connections.mandate_valid_from of the account's one
//   active connection while its mandate is active) until it lapses (a lapse clears mandate_valid_from; a new
//   signature sets a new moment), on MID chargers, on an active connection of an ERE-eligible account.
// - Per step: a step between two register readings counts when it goes forward and the gateway's step rule lets it
//   count (charging/register-points.ts marks the held ones); a step crossing a month boundary or the signing
//   moment is split at the register value at that instant, linearly interpolated in integer Wh (bigint, half away
//   from zero). A reading exactly on an instant closes the earlier part.
// - A session's counts_for_ere is true when any of its Wh count; its ERE come from the counted Wh only.
// - A monthly row counts in the views when it is registered (its ERE are booked), or when it is delivered or in
//   review on an active connection of an eligible account whose machtiging was in force before the month ended
//   (D149); a rejected month never counts.
//
// This folder imports no other domain folder but accounts, so charging (GET /sessions) and energy (the
// aggregation, GET /energy) can both use it without a circle.
import { sql, type RawBuilder } from 'kysely';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';
import { divRound } from '../../lib/decimal.ts';
import { monthBoundariesBetween, monthOf } from '../../lib/amsterdam-time.ts';
import { eligibleSql, isAccountEreEligible } from '../accounts/eligibility.ts';
import { ereForWh } from './factor.ts';

export interface RegisterPoint {
  at: Date;
  wh: bigint;
  /** the step ending at this reading is held out of ERE (flagged and not accepted by an operator) */
  held: boolean;
  /**
   * D176: the reading's own value is doubtful (an invalid signature, a future timestamp) and not accepted: no step
   * starts from it while a trusted reading came before (the gateway's fold, charging/readings.ts foldSteps)
   */
  doubtful?: boolean;
}

/**
 * Per-month Wh of one session's register points (time order) that count: forward steps not held, and of those
 * only the part at or after `from` (undefined: every such step, as for the all-chargers figures). The result is
 * added into `into`.
 */
export function splitSessionByMonth(points: RegisterPoint[], into = new Map<string, bigint>(), from?: Date): Map<string, bigint> {
  const fromMs = from?.getTime();
  let p: RegisterPoint | undefined; // the base: the last trusted point, else the first one
  for (const q of points) {
    const base = p;
    if (!base || !q.doubtful) p = q;
    if (!base || base.doubtful) continue; // D176: no step from a doubtful first reading counts until it is accepted
    const step = q.wh - base.wh;
    if (!stepGoesForward(step, q)) continue;
    if (fromMs !== undefined && q.at.getTime() <= fromMs) continue; // wholly before the machtiging
    const t0 = BigInt(base.at.getTime());
    const span = BigInt(q.at.getTime()) - t0;
    const cuts = span > 0n ? monthBoundariesBetween(base.at, q.at) : [];
    if (fromMs !== undefined && fromMs > base.at.getTime()) {
      // the signing moment inside the step: a cut like a month boundary, the part before it is dropped
      cuts.push(new Date(fromMs));
      cuts.sort((a, b) => a.getTime() - b.getTime());
    }
    let segStart = base.at;
    let regStart = base.wh;
    const add = (end: bigint) => {
      if (fromMs === undefined || segStart.getTime() >= fromMs) into.set(monthOf(segStart), (into.get(monthOf(segStart)) ?? 0n) + end - regStart);
    };
    for (const b of cuts) {
      const regB = base.wh + divRound(step * (BigInt(b.getTime()) - t0), span);
      add(regB);
      segStart = b;
      regStart = regB;
    }
    add(q.wh);
  }
  return into;
}

/** The forward-step rule over a held flag: a step counts when it goes forward and is not held. */
function stepGoesForward(step: bigint, end: RegisterPoint): boolean {
  return step > 0n && !end.held;
}

/** The total of a per-month map. */
export function totalWh(byMonth: Map<string, bigint>): bigint {
  let t = 0n;
  for (const v of byMonth.values()) t += v;
  return t;
}

/** ERE (scale 6) of counted Wh per month: each compliance year's Wh at that year's factor (C5.1). */
export function ereOfCounted(config: Pick<Config, 'RENEWABLE_SHARE'>, byMonth: Map<string, bigint>): bigint {
  const byYear = new Map<number, bigint>();
  for (const [m, wh] of byMonth) byYear.set(Number(m.slice(0, 4)), (byYear.get(Number(m.slice(0, 4))) ?? 0n) + wh);
  let ere = 0n;
  for (const [year, wh] of byYear) ere += ereForWh(config, year, wh);
  return ere;
}

/** From when a connection's energy counts: its mandate_valid_from while the mandate is active, else never. */
export function mandateFrom(c: { mandate_status: string; mandate_valid_from: Date | null }): Date | null {
  return c.mandate_status === 'active' && c.mandate_valid_from ? c.mandate_valid_from : null;
}

/**
 * From when the energy of a charger counts for the views of a session (GET /sessions, GET /chargers): MID, on an
 * account that is ERE-eligible now, from its one active connection's signing moment; null when none of it counts.
 */
export function chargerCountsFrom(charger: { mid: boolean; accountId: string | null }, accounts: Map<string, Date | null>): Date | null {
  if (!charger.mid || !charger.accountId) return null;
  return accounts.get(charger.accountId) ?? null;
}

/** For each account: the moment its energy counts from (eligible now, one active connection with an active mandate), or null. */
export async function accountsCountFrom(db: Db, accountIds: string[]): Promise<Map<string, Date | null>> {
  const out = new Map<string, Date | null>();
  const ids = [...new Set(accountIds)];
  if (ids.length === 0) return out;
  const conns = await db
    .selectFrom('connections')
    .select(['account_id', 'mandate_status', 'mandate_valid_from'])
    .where('account_id', 'in', ids)
    .where('status', '=', 'active')
    .execute();
  for (const id of ids) {
    const active = conns.filter((c) => c.account_id === id);
    // an account with several active connections cannot place its chargers' energy (the aggregation skips it too)
    const from = active.length === 1 ? mandateFrom(active[0]!) : null;
    out.set(id, from !== null && (await isAccountEreEligible(db, id)) ? from : null);
  }
  return out;
}

/**
 * SQL: a monthly row counts in the views (aliases: energy_months `em`, connections `c`, accounts `a`). Registered
 * months count with their booked ERE; delivered and in-review months when the connection is active and the
 * account eligible; rejected months never.
 */
export function monthCountsSql(em = 'em', c = 'c', a = 'a'): RawBuilder<boolean> {
  return sql<boolean>`(${sql.raw(em)}.status = 'registered' or (${sql.raw(em)}.status in ('delivered', 'in_review')
    and ${sql.raw(c)}.status = 'active' and ${eligibleSql(a)} and ${mandateCoversMonthSql(em, c)}))`;
}

/**
 * SQL: the machtiging was in force during the month: active, and in force from a moment before the month's end
 * (Europe/Amsterdam months, C6.8). A month that ended before the signing earns nothing, whoever delivered it (D149);
 * a CPO month in which the machtiging came into force is taken whole (D31: a monthly total cannot be split).
 */
export function mandateCoversMonthSql(em = 'em', c = 'c'): RawBuilder<boolean> {
  return sql<boolean>`(${sql.raw(c)}.mandate_status = 'active' and ${sql.raw(c)}.mandate_valid_from is not null
    and ${sql.raw(em)}.month >= to_char(${sql.raw(c)}.mandate_valid_from at time zone 'Europe/Amsterdam', 'YYYY-MM'))`;
}

/** The same rule for one month in code: the machtiging, active, came into force before the month ended. */
export function mandateCoversMonth(c: { mandate_status: string; mandate_valid_from: Date | null }, month: string): boolean {
  const from = mandateFrom(c);
  return from !== null && month >= monthOf(from);
}
