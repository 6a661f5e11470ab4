// C5.3 month lifecycle: delivered → in_review → registered (ERE booked) | rejected. Operator steps (admin API),
// the scheduled ere-review job (delivered → in_review once the review is due) and the sandbox helper (C2.6).
// C5.5: a month held for capacity (capacity.ts) cannot be registered until the operator accepts the excess (it then
// counts) or rejects it (it never counts).
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { toDec, formatDec } from '../../lib/decimal.ts';
import { deliveredUnits, whToKwhUnits, type HoldStatus } from './capacity.ts';
import { isAccountEreEligible } from '../accounts/eligibility.ts';
import { mandateCoversMonth } from './counting.ts';
import { DomainError } from '../errors.ts';
import { isMonth, localMidnightPlusDays, monthEnd, localParts, isoUtc } from '../../lib/amsterdam-time.ts';
import { ereForKwhUnits } from './amounts.ts';

export type ReviewAction = 'start' | 'register' | 'reject' | 'accept_held' | 'reject_held';

export interface EnergyMonthView {
  id: string;
  connection_id: string;
  month: string;
  kwh: number;
  sessions: number;
  source: 'cpo' | 'ocpp';
  status: 'delivered' | 'in_review' | 'registered' | 'rejected';
  ere: number | null;
  registered_at: string | null;
  review_note: string | null;
  /** C5.5: energy above the connection's capacity held out of kwh (accepted: counted in kwh) */
  held_kwh: number;
  hold: { reason: 'connection_capacity'; status: HoldStatus } | null;
}

interface MonthRow {
  id: string;
  connection_id: string;
  month: string;
  kwh: string;
  sessions: number;
  source: 'cpo' | 'ocpp';
  status: EnergyMonthView['status'];
  ere: string | null;
  registered_at: Date | null;
  review_note: string | null;
  held_wh: string;
  hold_reason: 'connection_capacity' | null;
  hold_status: HoldStatus | null;
}

const monthColumns = sql`id, connection_id, month, kwh, sessions, source, status, ere, registered_at, review_note,
  held_wh::text as held_wh, hold_reason, hold_status`;

export function viewOf(r: MonthRow): EnergyMonthView {
  return {
    id: r.id,
    connection_id: r.connection_id,
    month: r.month,
    kwh: Number(r.kwh),
    sessions: r.sessions,
    source: r.source,
    status: r.status,
    ere: r.ere === null ? null : Number(r.ere),
    registered_at: r.registered_at ? isoUtc(r.registered_at) : null,
    review_note: r.review_note,
    held_kwh: Number(formatDec(whToKwhUnits(BigInt(r.held_wh)), 2)),
    hold: r.hold_reason && r.hold_status ? { reason: r.hold_reason, status: r.hold_status } : null,
  };
}

/**
 * Months for the operator's review (admin API), filtered by status, connection, month or hold, a page at a time
 * (D131): `count` is every month matching the filters; ordered by month, then created_at, then id (unique), so pages
 * never repeat or skip a month.
 */
export async function listEnergyMonths(
  deps: Deps,
  q: {
    status?: string | undefined;
    connection_id?: string | undefined;
    month?: string | undefined;
    hold_status?: string | undefined;
    limit?: number | undefined;
    offset?: number | undefined;
  },
): Promise<{ energy_months: EnergyMonthView[]; limit: number; offset: number; count: number }> {
  const limit = q.limit ?? 100;
  const offset = q.offset ?? 0;
  const where = sql`(${q.status ?? null}::text is null or status = ${q.status ?? null})
      and (${q.connection_id ?? null}::uuid is null or connection_id = ${q.connection_id ?? null})
      and (${q.month ?? null}::text is null or month = ${q.month ?? null})
      and (${q.hold_status ?? null}::text is null or hold_status = ${q.hold_status ?? null})`;
  const c = await sql<{ n: string }>`select count(*) as n from energy_months where ${where}`.execute(deps.db);
  const r = await sql<MonthRow>`select ${monthColumns} from energy_months where ${where}
    order by month, created_at, id limit ${limit} offset ${offset}`.execute(deps.db);
  return { energy_months: r.rows.map(viewOf), limit, offset, count: Number(c.rows[0]!.n) };
}

/**
 * When a delivered month's review is due: ERE_REVIEW_DAYS calendar days after the month ends (Amsterdam
 * midnight), so late corrections of the month can still arrive before review.
 */
export function reviewDueAt(month: string, reviewDays: number): Date {
  const end = localParts(monthEnd(month));
  return localMidnightPlusDays(end.year, end.month, end.day, reviewDays);
}

/** ERE of a month (scale 2) with the factor of its compliance year (the month's year). */
export function monthEreUnits(deps: Deps, month: string, kwh: string): bigint {
  return ereForKwhUnits(deps.config, Number(month.slice(0, 4)), toDec(kwh, 2));
}

const ALLOWED: Record<ReviewAction, MonthRow['status'][]> = {
  start: ['delivered'],
  register: ['in_review'],
  reject: ['delivered', 'in_review'],
  accept_held: ['delivered', 'in_review'],
  reject_held: ['delivered', 'in_review'],
};
const TARGET: Record<'start' | 'register' | 'reject', MonthRow['status']> = { start: 'in_review', register: 'registered', reject: 'rejected' };

/** C5.5: the operator's decision on a capacity hold; the month's status stays, an accepted excess counts. */
async function decideHold(deps: Deps, row: MonthRow, decision: 'accepted' | 'rejected', note: string | null): Promise<MonthRow> {
  const kwh = decision === 'accepted' ? formatDec(deliveredUnits(row), 2) : row.kwh;
  const r = await sql<MonthRow>`update energy_months set
      kwh = ${kwh}::numeric, hold_status = ${decision}, updated_at = ${deps.clock()}, review_note = coalesce(${note}, review_note)
    where id = ${row.id}
    returning ${monthColumns}`.execute(deps.db);
  return r.rows[0]!;
}

async function lockMonth(deps: Deps, where: ReturnType<typeof sql>): Promise<MonthRow | undefined> {
  const r = await sql<MonthRow>`select ${monthColumns} from energy_months where ${where} for update`.execute(deps.db);
  return r.rows[0];
}

async function applyTransition(deps: Deps, row: MonthRow, to: MonthRow['status'], note: string | null): Promise<MonthRow> {
  const now = deps.clock();
  const ere = to === 'registered' ? formatDec(monthEreUnits(deps, row.month, row.kwh), 2) : null;
  const r = await sql<MonthRow>`update energy_months set
      status = ${to},
      updated_at = ${now},
      review_note = coalesce(${note}, review_note),
      review_started_at = case when ${to} = 'in_review' then ${now}::timestamptz else review_started_at end,
      registered_at = case when ${to} = 'registered' then ${now}::timestamptz else registered_at end,
      rejected_at = case when ${to} = 'rejected' then ${now}::timestamptz else rejected_at end,
      ere = case when ${to} = 'registered' then ${ere}::numeric else ere end
    where id = ${row.id}
    returning ${monthColumns}`.execute(deps.db);
  return r.rows[0]!;
}

async function connectionOfMonth(deps: Deps, row: MonthRow) {
  return deps.db
    .selectFrom('connections')
    .select(['account_id', 'mandate_status', 'mandate_valid_from'])
    .where('id', '=', row.connection_id)
    .executeTakeFirstOrThrow();
}

/** C5.4, D149: a month that ended before the machtiging came into force (or with none in force) earns no ERE. */
function refuseUncoveredMonth(conn: { mandate_status: string; mandate_valid_from: Date | null }, month: string): void {
  if (mandateCoversMonth(conn, month)) return;
  const from = conn.mandate_status === 'active' && conn.mandate_valid_from ? isoUtc(conn.mandate_valid_from) : null;
  throw new DomainError(
    'month_not_covered',
    from ? `${month} ended before the machtiging came into force (${from}); its energy earns no ERE` : `no machtiging is in force on this connection; ${month} earns no ERE`,
  );
}

/** Operator step on one month (admin API). Registering requires an ERE-eligible account (C2.8, C5.2). */
export async function reviewMonth(
  deps: Deps,
  id: string,
  input: { action: ReviewAction; note?: string | undefined },
): Promise<EnergyMonthView> {
  return deps.db.transaction().execute(async (trx) => {
    const d = { ...deps, db: trx };
    const row = /^[0-9a-f-]{36}$/i.test(id) ? await lockMonth(d, sql`id = ${id}`) : undefined;
    if (!row) throw new DomainError('energy_month_not_found', `no energy month ${id}`);
    if (!ALLOWED[input.action].includes(row.status)) {
      throw new DomainError('invalid_transition', `a ${row.status} month cannot take the action ${input.action}`);
    }
    const note = input.note?.trim() || null;
    if (input.action === 'accept_held' || input.action === 'reject_held') {
      if (row.hold_status !== 'held') throw new DomainError('invalid_transition', 'the month has no open hold');
      return viewOf(await decideHold(d, row, input.action === 'accept_held' ? 'accepted' : 'rejected', note));
    }
    if (input.action === 'register' && row.hold_status === 'held') {
      throw new DomainError('energy_held', `${row.month} holds energy above the connection's capacity (${row.hold_reason}); accept or reject it first`);
    }
    if (input.action === 'register') {
      const conn = await connectionOfMonth(d, row);
      if (!(await isAccountEreEligible(trx, conn.account_id))) {
        throw new DomainError('account_not_eligible', 'the account is not ERE-eligible (C2.8); its energy cannot be registered');
      }
      refuseUncoveredMonth(conn, row.month);
    }
    return viewOf(await applyTransition(d, row, TARGET[input.action], note));
  });
}

/**
 * C2.6 sandbox helper: marks a delivered (or in-review) month of one of the caller's connections registered.
 * Sandbox only (no real registration), so the account need not be eligible. Registered again → same answer.
 */
export async function sandboxRegisterMonth(
  deps: Deps,
  partnerId: string,
  connectionId: string,
  month: unknown,
): Promise<EnergyMonthView> {
  if (!isMonth(month)) throw new DomainError('invalid_month', 'month must be YYYY-MM');
  return deps.db.transaction().execute(async (trx) => {
    const d = { ...deps, db: trx };
    const conn = /^[0-9a-f-]{36}$/i.test(connectionId)
      ? await trx
          .selectFrom('connections as c')
          .innerJoin('accounts as a', 'a.id', 'c.account_id')
          .select('c.id')
          .where('c.id', '=', connectionId)
          .where('a.partner_id', '=', partnerId)
          .executeTakeFirst()
      : undefined;
    if (!conn) throw new DomainError('connection_not_found', `no connection ${connectionId} for this partner`);
    const row = await lockMonth(d, sql`connection_id = ${connectionId} and month = ${month}`);
    if (!row) throw new DomainError('energy_month_not_found', `no energy delivered for ${month} on this connection`);
    if (row.status === 'registered') return viewOf(row);
    if (row.status === 'rejected') throw new DomainError('invalid_transition', `${month} was rejected in review`);
    if (row.hold_status === 'held') throw new DomainError('energy_held', `${month} holds energy above the connection's capacity; an operator decides first`);
    refuseUncoveredMonth(await connectionOfMonth(d, row), row.month);
    return viewOf(await applyTransition(d, row, 'registered', 'sandbox register-ere'));
  });
}

/** The ere-review job: delivered months whose review is due move to in_review. Registration stays an operator step. */
export async function startDueReviews(deps: Deps): Promise<{ moved: number; months: string[] }> {
  const now = deps.clock();
  const months = await deps.db
    .selectFrom('energy_months')
    .select('month')
    .distinct()
    .where('status', '=', 'delivered')
    .execute();
  const due = months.map((m) => m.month).filter((m) => reviewDueAt(m, deps.config.ERE_REVIEW_DAYS).getTime() <= now.getTime());
  if (due.length === 0) return { moved: 0, months: [] };
  const r = await deps.db
    .updateTable('energy_months')
    .set({ status: 'in_review', updated_at: now, review_started_at: now })
    .where('status', '=', 'delivered')
    .where('month', 'in', due)
    .executeTakeFirst();
  return { moved: Number(r.numUpdatedRows), months: due.sort() };
}
