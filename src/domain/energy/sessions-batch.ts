// C2.4: POST /v1/sessions:batch. Each item names its connection (connection_id, account_id or cpo_external_ref,
// within the caller's partner only: C2.1) and goes through recordMonthlyEnergy. One bad item never fails the others.
import type { Deps } from '../../deps.ts';
import { formatDec } from '../../lib/decimal.ts';
import { sql } from 'kysely';
import { BATCH_MAX_ITEMS } from '../../../schemas/http/sessions-batch.ts';
import { checkRecordInput, decideMonthWrite, monthFigures, parseKwh, reject, type RecordEnergyResult, type RecordStatus, type StoredMonth } from './record-energy.ts';

export { BATCH_MAX_ITEMS };

export interface BatchItemResult {
  index: number;
  connection_id: string | null;
  month: string | null;
  kwh: number | null;
  status: RecordStatus;
  error?: string;
}

export interface BatchResult {
  ok: true;
  results: BatchItemResult[];
  counts: { created: number; updated: number; unchanged: number; rejected: number };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Target = { connectionId: string } | { error: string };

const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);
const refOf = (v: unknown) => (typeof v === 'string' && v.trim() !== '' ? v.trim().slice(0, 120) : null);

/**
 * Every item's connection within the partner (C2.1: another partner's records are not found), with three queries
 * whatever the number of items: the connections named by id, the accounts named by cpo_external_ref, and the
 * connections of the accounts named either way.
 */
async function resolveTargets(deps: Deps, partnerId: string, items: Array<Record<string, unknown>>): Promise<Target[]> {
  const connIds = [...new Set(items.map((i) => i.connection_id).filter(isUuid))];
  const refs = [...new Set(items.filter((i) => i.connection_id == null && i.account_id == null).map((i) => refOf(i.cpo_external_ref)).filter((r): r is string => r !== null))];
  const byId = new Map(
    connIds.length === 0
      ? []
      : (
          await deps.db
            .selectFrom('connections as c')
            .innerJoin('accounts as a', 'a.id', 'c.account_id')
            .select(['c.id', 'c.status'])
            .where('c.id', 'in', connIds)
            .where('a.partner_id', '=', partnerId)
            .execute()
        ).map((c) => [c.id, c.status]),
  );
  const accountByRef = new Map(
    refs.length === 0
      ? []
      : (await deps.db.selectFrom('accounts').select(['id', 'cpo_external_ref']).where('partner_id', '=', partnerId).where('cpo_external_ref', 'in', refs).execute()).map(
          (a) => [a.cpo_external_ref!, a.id],
        ),
  );
  const accountOf = (i: Record<string, unknown>): string | undefined =>
    i.account_id != null ? (isUuid(i.account_id) ? i.account_id : undefined) : accountByRef.get(refOf(i.cpo_external_ref) ?? '');
  const accountIds = [...new Set(items.filter((i) => i.connection_id == null).map(accountOf).filter((a): a is string => a !== undefined))];
  const connsOf = new Map<string, Array<{ id: string; status: string }>>();
  if (accountIds.length > 0) {
    const rows = await deps.db
      .selectFrom('connections as c')
      .innerJoin('accounts as a', 'a.id', 'c.account_id')
      .select(['c.id', 'c.status', 'c.account_id'])
      .where('a.id', 'in', accountIds)
      .where('a.partner_id', '=', partnerId)
      .orderBy('c.created_at')
      .execute();
    for (const r of rows) connsOf.set(r.account_id, [...(connsOf.get(r.account_id) ?? []), r]);
  }
  return items.map((i): Target => {
    if (i.connection_id !== undefined && i.connection_id !== null) {
      const status = isUuid(i.connection_id) ? byId.get(i.connection_id) : undefined;
      if (status === undefined) return { error: 'connection_not_found' };
      return status === 'active' ? { connectionId: i.connection_id as string } : { error: 'connection_not_active' };
    }
    if ((i.account_id === undefined || i.account_id === null) && refOf(i.cpo_external_ref) === null) return { error: 'target_required' };
    const accountId = accountOf(i);
    if (accountId === undefined) return { error: 'connection_not_found' };
    const conns = connsOf.get(accountId) ?? [];
    const active = conns.filter((c) => c.status === 'active');
    if (active.length === 1) return { connectionId: active[0]!.id };
    if (active.length > 1) return { error: 'ambiguous_connection' };
    return { error: conns.length ? 'connection_not_active' : 'connection_not_found' };
  });
}


/**
 * Targets are resolved first, then the valid items are written in one transaction with a fixed number of
 * statements whatever their count: their connections read FOR SHARE (in id order: concurrent batches, corrections
 * and archives take locks in the same order, connection then months), the new months inserted in one statement,
 * the existing ones read FOR UPDATE in one, and the changed ones updated in one. The rules are recordMonthlyEnergy's
 * (record-energy.ts), applied per item in request order on the row as the items before it left it: the same kWh is
 * unchanged, a registered month is never changed (ere_booked), other kWh restarts the review (updated). The
 * connection is checked in the write transaction (issue 10 item 7), so an archive that lands during the request
 * rejects the item.
 */
export async function recordSessionsBatch(deps: Deps, partnerId: string, items: unknown[]): Promise<BatchResult> {
  const results: BatchItemResult[] = new Array(items.length);
  const counts = { created: 0, updated: 0, unchanged: 0, rejected: 0 };
  const objects = items.map((raw) => (raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null));
  const targets = await resolveTargets(deps, partnerId, objects.filter((o): o is Record<string, unknown> => o !== null));
  const pending: Array<{ index: number; item: Record<string, unknown>; connectionId: string; kwhOut: number | null }> = [];
  let t = 0;
  for (const [index, item] of objects.entries()) {
    if (!item) {
      results[index] = { index, connection_id: null, month: null, kwh: null, status: 'rejected', error: 'invalid_request' };
      continue;
    }
    const target = targets[t++]!;
    const units = parseKwh(item.kwh);
    const kwhOut = units !== null ? Number(formatDec(units, 2)) : typeof item.kwh === 'number' && Number.isFinite(item.kwh) ? item.kwh : null;
    if ('error' in target) {
      results[index] = { index, connection_id: null, month: typeof item.month === 'string' ? item.month : null, kwh: kwhOut, status: 'rejected', error: target.error };
    } else {
      pending.push({ index, item, connectionId: target.connectionId, kwhOut });
    }
  }
  if (pending.length) await writeMonths(deps, pending, results);
  for (const r of results) counts[r.status] += 1;
  return { ok: true, results, counts };
}

async function writeMonths(
  deps: Deps,
  pending: Array<{ index: number; item: Record<string, unknown>; connectionId: string; kwhOut: number | null }>,
  results: BatchItemResult[],
): Promise<void> {
  const now = deps.clock();
  const answer = (p: (typeof pending)[number], r: RecordEnergyResult) => {
    results[p.index] = {
      index: p.index,
      connection_id: p.connectionId,
      month: typeof p.item.month === 'string' ? p.item.month : null,
      kwh: r.kwh !== null ? Number(r.kwh) : p.kwhOut,
      status: r.status,
      ...(r.error ? { error: r.error } : {}),
    };
  };
  // the checks of the input come first, as in recordMonthlyEnergy
  const valid: Array<{ p: (typeof pending)[number]; month: string; units: bigint; kwh: string }> = [];
  for (const p of pending) {
    const c = checkRecordInput(deps, { month: p.item.month, kwh: p.item.kwh });
    if (c.ok) valid.push({ p, month: c.month, units: c.units, kwh: c.kwh });
    else answer(p, c.result);
  }
  if (valid.length === 0) return;
  await deps.db.transaction().execute(async (trx) => {
    const ids = [...new Set(valid.map((v) => v.p.connectionId))].sort();
    const conns = await trx.selectFrom('connections').select(['id', 'status']).where('id', 'in', ids).orderBy('id').forShare().execute();
    const statusOf = new Map(conns.map((c) => [c.id, c.status]));
    const live = valid.filter((v) => {
      const st = statusOf.get(v.p.connectionId);
      if (st === 'active') return true;
      answer(v.p, reject(st === undefined ? 'connection_not_found' : 'connection_not_active', v.kwh));
      return false;
    });
    if (live.length === 0) return;
    // in (connection, month) order, and request order within one key: the first of a key may create its month
    const keyOf = (v: (typeof live)[number]) => `${v.p.connectionId}|${v.month}`;
    live.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : a.p.index - b.p.index));
    const firsts = live.filter((v, i) => i === 0 || keyOf(live[i - 1]!) !== keyOf(v));
    // the figures a delivery stores, with the capacity hold (record-energy.ts monthFigures)
    const figures = (v: (typeof live)[number]) => monthFigures(deps.config, { month: v.month, units: v.units, wh: null, source: 'cpo' });
    const firstFigures = firsts.map(figures);
    const created = await sql<{ id: string; connection_id: string; month: string }>`
      insert into energy_months (connection_id, month, kwh, sessions, source, held_wh, hold_reason, hold_status, created_at, updated_at)
      select c, m, k::numeric, 0, 'cpo', h::bigint, hr, hs, ${now}::timestamptz, ${now}::timestamptz
        from unnest(${firsts.map((v) => v.p.connectionId)}::uuid[], ${firsts.map((v) => v.month)}::text[], ${firstFigures.map((f) => f.kwh)}::text[],
                    ${firstFigures.map((f) => f.held_wh)}::text[], ${firstFigures.map((f) => f.hold_reason)}::text[], ${firstFigures.map((f) => f.hold_status)}::text[]) as u(c, m, k, h, hr, hs)
      on conflict (connection_id, month) do nothing
      returning id, connection_id, month`.execute(trx);
    const createdIds = new Map(created.rows.map((r) => [`${r.connection_id}|${r.month}`, r.id]));
    const createdKeys = new Set(createdIds.keys());
    const rows = new Map<string, StoredMonth>(); // a created month is filled in by its first item below
    const others = firsts.filter((v) => !createdKeys.has(keyOf(v)));
    if (others.length > 0) {
      const existing = await sql<StoredMonth & { connection_id: string; month: string }>`
        select e.id, e.connection_id, e.month, e.kwh::text as kwh, e.wh::text as wh, e.sessions, e.status, e.source,
               e.held_wh::text as held_wh, e.hold_status
          from energy_months e
          join unnest(${others.map((v) => v.p.connectionId)}::uuid[], ${others.map((v) => v.month)}::text[]) as u(c, m)
            on e.connection_id = u.c and e.month = u.m
         order by e.connection_id, e.month
           for update of e`.execute(trx);
      for (const r of existing.rows) rows.set(`${r.connection_id}|${r.month}`, r);
    }
    // the rules of recordMonthlyEnergy (decideMonthWrite), per item in request order on the row as the items before it left it
    const changed = new Map<string, StoredMonth & { figures: ReturnType<typeof figures> }>();
    for (const v of live) {
      const key = keyOf(v);
      const row = rows.get(key);
      if (row === undefined && createdKeys.has(key)) {
        const f = figures(v); // this item created it
        const id = createdIds.get(key)!;
        rows.set(key, { id, kwh: f.kwh, wh: null, sessions: 0, status: 'delivered', source: 'cpo', held_wh: f.held_wh, hold_status: f.hold_status });
        answer(v.p, { status: 'created', kwh: v.kwh, energyMonthId: id });
        continue;
      }
      const w = decideMonthWrite(deps.config, row!, { month: v.month, units: v.units, wh: null, source: 'cpo' });
      if (w.write === 'update') {
        const next = { ...row!, kwh: w.set.kwh, wh: null, status: 'delivered', source: 'cpo', held_wh: w.set.held_wh, hold_status: w.set.hold_status };
        rows.set(key, next);
        changed.set(key, { ...next, figures: w.set });
      }
      answer(v.p, w.result);
    }
    if (changed.size > 0) {
      const list = [...changed.values()];
      await sql`
        update energy_months e
           set kwh = u.k::numeric, wh = null, source = 'cpo', status = 'delivered', updated_at = ${now}::timestamptz,
               review_started_at = null, rejected_at = null, held_wh = u.h::bigint, hold_reason = u.hr, hold_status = u.hs
          from unnest(${list.map((c) => c.id)}::uuid[], ${list.map((c) => c.figures.kwh)}::text[], ${list.map((c) => c.figures.held_wh)}::text[],
                      ${list.map((c) => c.figures.hold_reason)}::text[], ${list.map((c) => c.figures.hold_status)}::text[]) as u(id, k, h, hr, hs)
         where e.id = u.id`.execute(trx);
    }
  });
}
