// D113: the capacity hold (D32) on months written without it. A month stored before the hold existed (migration
// 0057 added its columns with no hold) or by any path that skipped it must not be registered above what its
// connection could deliver. Each aggregation run holds the excess of every month that is still open (delivered or in
// review), has no hold decided either way, and is above its capacity, with the same figures a delivery would get
// (holdOf): the month keeps what the connection could have delivered in `kwh`, the excess waits for the operator,
// and the review starts again. A month within its capacity is never read twice: the filter is one indexed-size scan
// of the open months above the smallest month's capacity.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { toDec } from '../../lib/decimal.ts';
import { holdOf } from '../ere/capacity.ts';

/** The months held by this call (0 when every open month was within its capacity or decided). */
export async function holdMonthsOverCapacity(deps: Pick<Deps, 'db' | 'config'>): Promise<number> {
  // February's 672 hours: no month can hold less, so a month under this is within its capacity whatever it is
  const floorWh = toDec(deps.config.CONNECTION_MAX_KW, 3) * 672n;
  const open = await deps.db
    .selectFrom('energy_months')
    .select(['id', 'month', sql<string>`kwh::text`.as('kwh'), sql<string | null>`wh::text`.as('wh')])
    .where('status', 'in', ['delivered', 'in_review'])
    .where('hold_status', 'is', null)
    .where(sql<boolean>`coalesce(wh, kwh * 1000) > ${floorWh.toString()}::numeric`)
    .execute();
  let held = 0;
  for (const m of open) {
    const f = holdOf(deps.config, m.month, toDec(m.kwh, 2), m.wh === null ? null : BigInt(m.wh));
    if (f.hold_reason === null) continue;
    const r = await deps.db
      .updateTable('energy_months')
      .set({ kwh: f.kwh, held_wh: f.held_wh, hold_reason: f.hold_reason, hold_status: f.hold_status, status: 'delivered', updated_at: sql`now()` })
      .where('id', '=', m.id)
      .where('hold_status', 'is', null)
      .where('status', 'in', ['delivered', 'in_review'])
      .executeTakeFirst();
    held += Number(r.numUpdatedRows);
  }
  return held;
}
