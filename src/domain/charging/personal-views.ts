// Personal API views (spec §2, §4.3): the charger list items and the session list of one user. A user sees the
// chargers they own and those of accounts they own; nothing else.
import { type SelectQueryBuilder, sql } from 'kysely';
import type { Database } from '../../db/tables.ts';
import type { Deps } from '../../deps.ts';
import { userFeePct } from '../ere/ledger.ts';
import { utc } from '../chargers/id-tokens.ts';
import { estimateBasis, kwhOf, type EstimateBasis } from './estimate.ts';
import { holderAlive, isOnline } from '../chargers/live-view.ts';
import { ENERGY_REGISTER, FUTURE_TOLERANCE_MS } from './readings.ts';
import { reviewOf, type SessionReview } from './review.ts';
import { sessionCredits } from './session-credits.ts';
import { NOT_SIGNED, type SignedCounts, signedCountsOf } from './signed-counts.ts';

export interface ChargerItem {
  id: string;
  nickname: string;
  connection_type: 'ocpp' | 'cloud_api';
  status: 'online' | 'offline';
  mid_certified: boolean;
  is_charging: boolean;
  current_session?: { id: string; started_at: string; kwh_so_far: number; wh_so_far: number; id_tag: string | null; estimated_euro: number; review: SessionReview | null };
  latest_meter_wh?: number;
  meter_updated_at?: string;
}

export interface SessionItem {
  id: string;
  charger_id: string;
  charger_nickname: string;
  started_at: string;
  ended_at: string | null;
  kwh: number;
  status: 'active' | 'completed';
  id_tag: string | null;
  counts_for_ere: boolean;
  ere_credits: number;
  estimated_euro: number;
  /** C5.5: held energy (flagged steps) and the operator's decision; null when nothing was flagged */
  review: SessionReview | null;
  /** C5.5: the session's signed register readings, how many verified and how many failed verification */
  signed: SignedCounts;
}

/** The start of the previous UTC month: the months a charger in use has its latest reading in. */
function recentMonthsFrom(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
}

/**
 * The latest register reading (wh, measured_at) of the lookup it is given a charger for, up to `now` and the
 * tolerance for a charger's clock (D122: a reading stamped further ahead is held as future_timestamp and is not the
 * meter's present value); from `from` on when given.
 */
function latestReading<DB extends Database>(q: SelectQueryBuilder<DB, 'meter_readings', object>, now: Date, from?: Date) {
  return q
    .select(['meter_readings.wh as latest_wh', 'meter_readings.measured_at as latest_at'])
    .where(sql<boolean>`meter_readings.measurand = ${ENERGY_REGISTER} and meter_readings.phase = ''`)
    .where(from ? sql<boolean>`meter_readings.measured_at >= ${from}::timestamptz` : sql<boolean>`true`)
    .where(sql<boolean>`meter_readings.measured_at <= ${new Date(now.getTime() + FUTURE_TOLERANCE_MS)}::timestamptz`)
    .orderBy('meter_readings.measured_at', 'desc')
    // two readings of one second (a meterStop stamped in the second of the last MeterValues): the register's later
    // value is the higher one
    .orderBy('meter_readings.wh', 'desc')
    .limit(1);
}

function visibleChargers(deps: Deps, userId: string) {
  return deps.db
    .selectFrom('chargers')
    .where('chargers.status', '=', 'active')
    .where((eb) =>
      eb.or([
        eb('chargers.owner_user_id', '=', userId),
        eb('chargers.account_id', 'in', eb.selectFrom('accounts').select('accounts.id').where('accounts.owner_user_id', '=', userId)),
      ]),
    );
}

/** The user's charger items; `only` narrows to one charger or a set of them (the push stream, C7.1). */
export async function listChargerItems(deps: Deps, userId: string, only?: string | string[]): Promise<ChargerItem[]> {
  const now = deps.clock();
  let q = visibleChargers(deps, userId)
    .leftJoin('ocpp_chargers', 'ocpp_chargers.charger_id', 'chargers.id')
    .select([
      'chargers.id',
      'chargers.nickname',
      'chargers.ocpp_identity',
      'chargers.connection_type',
      'chargers.mid_certified',
      'chargers.account_id',
      'ocpp_chargers.connected',
      'ocpp_chargers.last_seen_at',
      // C4.8: the holder's lease, in the same query (GET /chargers is polled often)
      holderAlive(),
    ])
    // the latest register reading of each charger, in one lateral lookup (GET /chargers is polled often), first
    // among the recent months only (D74: the planner then plans those partitions, not every month kept)
    .leftJoinLateral(
      (eb) => latestReading(eb.selectFrom('meter_readings').whereRef('meter_readings.charger_id', '=', 'chargers.id'), now, recentMonthsFrom(now)).as('latest'),
      (join) => join.onTrue(),
    )
    .select(['latest.latest_wh', 'latest.latest_at'])
    .orderBy('chargers.created_at')
    .orderBy('chargers.id');
  if (typeof only === 'string') q = q.where('chargers.id', '=', only);
  else if (only) {
    if (only.length === 0) return [];
    q = q.where('chargers.id', 'in', only);
  }
  const rows = await q.execute();
  // a charger without a reading in the recent months: its latest one, wherever it is
  const older = rows.filter((r) => r.latest_at === null).map((r) => r.id);
  if (older.length) {
    const found = await deps.db
      .selectFrom(sql<{ id: string }>`(select unnest(${older}::uuid[]) as id)`.as('c'))
      .innerJoinLateral((eb) => latestReading(eb.selectFrom('meter_readings').whereRef('meter_readings.charger_id', '=', 'c.id'), now).as('latest'), (join) => join.onTrue())
      .select(['c.id', 'latest.latest_wh', 'latest.latest_at'])
      .execute();
    const byId = new Map(found.map((f) => [f.id, f]));
    for (const r of rows) {
      const f = byId.get(r.id);
      if (f) Object.assign(r, { latest_wh: f.latest_wh, latest_at: f.latest_at });
    }
  }
  const ids = rows.map((r) => r.id);
  const chargerOf = new Map(rows.map((r) => [r.id, { mid: r.mid_certified, accountId: r.account_id }]));
  const active = ids.length
    ? await deps.db
        .selectFrom('charging_sessions')
        .select(['id', 'charger_id', 'started_at', 'energy_wh', 'id_tag', 'held_wh', 'review_status', 'review_reason'])
        .where('charger_id', 'in', ids)
        .where('status', '=', 'active')
        .orderBy('started_at', 'desc')
        .execute()
    : [];
  // C5.4: what of a live session counts so far (the same rule as GET /sessions and the monthly rows)
  const live = active.length ? await sessionCredits(deps, active.map((a) => ({ id: a.id, ...chargerOf.get(a.charger_id)! })), await userFeePct(deps, userId)) : new Map();
  const out: ChargerItem[] = [];
  for (const r of rows) {
    const s = active.find((a) => a.charger_id === r.id);
    const item: ChargerItem = {
      id: r.id,
      nickname: r.nickname ?? r.ocpp_identity ?? '',
      connection_type: r.connection_type,
      status: isOnline(deps, { connected: !!r.connected, last_seen_at: r.last_seen_at ?? null, holder_alive: !!r.holder_alive }) ? 'online' : 'offline',
      mid_certified: r.mid_certified,
      is_charging: !!s,
    };
    if (s) {
      item.current_session = {
        id: s.id,
        started_at: utc(s.started_at),
        kwh_so_far: kwhOf(s.energy_wh),
        wh_so_far: Number(s.energy_wh),
        id_tag: s.id_tag,
        estimated_euro: live.get(s.id)?.estimated_euro ?? 0,
        review: reviewOf(s),
      };
    }
    if (r.latest_wh !== null && r.latest_wh !== undefined) item.latest_meter_wh = Number(r.latest_wh);
    if (r.latest_at) item.meter_updated_at = utc(new Date(r.latest_at));
    out.push(item);
  }
  return out;
}

export interface SessionQuery {
  limit: number;
  offset: number;
  charger_id?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  /** started before this instant (a `to` date: the next Amsterdam midnight) */
  before?: Date | undefined;
  /** only these sessions (the push stream's session events, C7.1) */
  ids?: string[] | undefined;
}

export async function listSessionItems(
  deps: Deps,
  userId: string,
  q: SessionQuery,
): Promise<{ sessions: SessionItem[]; limit: number; offset: number; estimate_basis: EstimateBasis }> {
  let query = deps.db
    .selectFrom('charging_sessions as s')
    .innerJoin('chargers', 'chargers.id', 's.charger_id')
    .where('s.charger_id', 'in', visibleChargers(deps, userId).select('chargers.id'))
    .select([
      's.id',
      's.charger_id',
      'chargers.nickname',
      'chargers.ocpp_identity',
      'chargers.mid_certified',
      'chargers.account_id',
      's.started_at',
      's.ended_at',
      's.energy_wh',
      's.held_wh',
      's.review_status',
      's.review_reason',
      's.status',
      's.id_tag',
      's.first_reading_at',
      's.last_reading_at',
    ]);
  if (q.charger_id) query = query.where('s.charger_id', '=', q.charger_id);
  if (q.from) query = query.where('s.started_at', '>=', q.from);
  if (q.to) query = query.where('s.started_at', '<=', q.to);
  if (q.before) query = query.where('s.started_at', '<', q.before);
  if (q.ids) query = q.ids.length ? query.where('s.id', 'in', q.ids) : query.where(sql<boolean>`false`);
  const rows = await query.orderBy('s.started_at', 'desc').orderBy(sql`s.id`).limit(q.limit).offset(q.offset).execute();
  const signed = await signedCountsOf(deps.db, rows);
  const feePct = await userFeePct(deps, userId);
  const credits = await sessionCredits(deps, rows.map((r) => ({ id: r.id, mid: r.mid_certified, accountId: r.account_id })), feePct);
  const sessions: SessionItem[] = [];
  for (const r of rows) {
    const c = credits.get(r.id)!;
    const wh = BigInt(r.energy_wh);
    sessions.push({
      id: r.id,
      charger_id: r.charger_id,
      charger_nickname: r.nickname ?? r.ocpp_identity ?? '',
      started_at: utc(r.started_at),
      ended_at: r.ended_at ? utc(r.ended_at) : null,
      kwh: kwhOf(wh),
      status: r.status,
      id_tag: r.id_tag,
      counts_for_ere: c.counts_for_ere,
      ere_credits: c.ere_credits,
      estimated_euro: c.estimated_euro,
      review: reviewOf(r),
      signed: signed.get(r.id) ?? NOT_SIGNED,
    });
  }
  return { sessions, limit: q.limit, offset: q.offset, estimate_basis: estimateBasis(deps.config, feePct) };
}
