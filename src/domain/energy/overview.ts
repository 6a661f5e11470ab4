// C6.5 GET /energy: monthly aggregates newest first and lifetime totals for the user's accounts. The plain
// figures are the ERE-countable ones, by the one rule (ere/counting.ts monthCountsSql, C5.4): registered months,
// and delivered or in-review months of active connections of ERE-eligible accounts (OCPP months hold the MID
// energy from the machtiging's moment on). The *_all figures count every charger: the OCPP energy of all the
// user's chargers (MID or not, with or without an account, signed or not) plus the months CPOs delivered, a CPO's
// month in place of the OCPP energy of that account's chargers in that month.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { formatDec, toDec } from '../../lib/decimal.ts';
import { whToKwhUnits } from '../ere/capacity.ts';
import { monthCountsSql } from '../ere/counting.ts';
import { ereForKwhUnits } from '../ere/amounts.ts';
import { monthlyChargerEnergy } from './month-energy.ts';

export interface EnergyMonthOut {
  month: string;
  kwh: number;
  ere_credits: number;
  sessions: number;
  kwh_all: number;
  sessions_all: number;
}

export interface EnergyOverview {
  total_kwh: number;
  total_ere_credits: number;
  total_sessions: number;
  total_kwh_all: number;
  total_sessions_all: number;
  months: EnergyMonthOut[];
}

interface Acc {
  kwh: bigint;
  ere: bigint;
  sessions: number;
  kwhAll: bigint;
  sessionsAll: number;
}

export async function energyOverview(deps: Deps, userId: string): Promise<EnergyOverview> {
  const rows = await sql<{ month: string; kwh: string; sessions: number; status: string; ere: string | null; source: string; countable: boolean; account_id: string }>`
    select em.month, em.kwh, em.sessions, em.status, em.ere, em.source, c.account_id,
           ${monthCountsSql()} as countable
    from energy_months em
    join connections c on c.id = em.connection_id
    join accounts a on a.id = c.account_id
    where a.owner_user_id = ${userId} and em.status <> 'rejected'`.execute(deps.db);

  const chargers = await sql<{ id: string; account_id: string | null }>`select ch.id, ch.account_id from chargers ch
    left join accounts a on a.id = ch.account_id
    where ch.owner_user_id = ${userId} or a.owner_user_id = ${userId}`.execute(deps.db);
  // A month a CPO delivered for an account's connection is that connection's energy of the month in place of what
  // its chargers metered over OCPP (as in the plain figures, where the CPO's row replaced the OCPP one): the *_all
  // figures take the CPO's month and leave out those chargers' OCPP energy of that month, not both (D98)
  const cpoMonths = new Map<string, Set<string>>();
  for (const r of rows.rows) if (r.source === 'cpo') (cpoMonths.get(r.account_id) ?? cpoMonths.set(r.account_id, new Set()).get(r.account_id)!).add(r.month);
  const groups = new Map<string | null, string[]>(); // by account with CPO months; null: every other charger
  for (const ch of chargers.rows) {
    const key = ch.account_id !== null && cpoMonths.has(ch.account_id) ? ch.account_id : null;
    (groups.get(key) ?? groups.set(key, []).get(key)!).push(ch.id);
  }
  const ocppAll = new Map<string, { wh: bigint; sessions: number }>();
  for (const [account, ids] of groups) {
    for (const [month, t] of await monthlyChargerEnergy(deps, ids, undefined, { sessionRows: true })) {
      if (account !== null && cpoMonths.get(account)!.has(month)) continue;
      const a = ocppAll.get(month) ?? ocppAll.set(month, { wh: 0n, sessions: 0 }).get(month)!;
      a.wh += t.wh;
      a.sessions += t.sessions;
    }
  }

  const by = new Map<string, Acc>();
  const get = (m: string) => by.get(m) ?? by.set(m, { kwh: 0n, ere: 0n, sessions: 0, kwhAll: 0n, sessionsAll: 0 }).get(m)!;
  for (const r of rows.rows) {
    const kwh = toDec(r.kwh, 2);
    if (r.countable) {
      const a = get(r.month);
      a.kwh += kwh;
      a.sessions += r.sessions;
      // registered months carry their booked ERE; others the estimate at the factor of the month's year
      a.ere += r.status === 'registered' && r.ere !== null ? toDec(r.ere, 2) : ereForKwhUnits(deps.config, Number(r.month.slice(0, 4)), kwh);
    }
    if (r.source === 'cpo') {
      const a = get(r.month);
      a.kwhAll += kwh;
      a.sessionsAll += r.sessions;
    }
  }
  for (const [month, t] of ocppAll) {
    const a = get(month);
    a.kwhAll += whToKwhUnits(t.wh);
    a.sessionsAll += t.sessions;
  }

  const months = [...by.entries()].sort(([a], [b]) => b.localeCompare(a));
  const tot: Acc = { kwh: 0n, ere: 0n, sessions: 0, kwhAll: 0n, sessionsAll: 0 };
  for (const [, a] of months) {
    tot.kwh += a.kwh;
    tot.ere += a.ere;
    tot.sessions += a.sessions;
    tot.kwhAll += a.kwhAll;
    tot.sessionsAll += a.sessionsAll;
  }
  const n2 = (u: bigint) => Number(formatDec(u, 2));
  return {
    total_kwh: n2(tot.kwh),
    total_ere_credits: n2(tot.ere),
    total_sessions: tot.sessions,
    total_kwh_all: n2(tot.kwhAll),
    total_sessions_all: tot.sessionsAll,
    months: months.map(([month, a]) => ({
      month,
      kwh: n2(a.kwh),
      ere_credits: n2(a.ere),
      sessions: a.sessions,
      kwh_all: n2(a.kwhAll),
      sessions_all: a.sessionsAll,
    })),
  };
}
