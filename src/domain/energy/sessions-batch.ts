// C2.4: POST /v1/sessions:batch. Each item names its connection (connection_id, account_id or cpo_external_ref,
// within the caller's partner only: C2.1) and goes through recordMonthlyEnergy. One bad item never fails the others.
import type { Deps } from '../../deps.ts';
import { formatDec } from '../../lib/decimal.ts';
import { parseKwh, recordMonthlyEnergy, type RecordStatus } from './record-energy.ts';

export const BATCH_MAX_ITEMS = 1000;

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

/** Resolve an item's connection within the partner (C2.1: another partner's records are not found). */
export async function resolveConnection(deps: Deps, partnerId: string, item: Record<string, unknown>): Promise<Target> {
  const { connection_id: cid, account_id: aid, cpo_external_ref: ref } = item;
  if (cid !== undefined && cid !== null) {
    if (typeof cid !== 'string' || !UUID.test(cid)) return { error: 'connection_not_found' };
    const c = await deps.db
      .selectFrom('connections as c')
      .innerJoin('accounts as a', 'a.id', 'c.account_id')
      .select(['c.id', 'c.status'])
      .where('c.id', '=', cid)
      .where('a.partner_id', '=', partnerId)
      .executeTakeFirst();
    if (!c) return { error: 'connection_not_found' };
    return c.status === 'active' ? { connectionId: c.id } : { error: 'connection_not_active' };
  }
  let accountId: string | undefined;
  if (aid !== undefined && aid !== null) {
    if (typeof aid !== 'string' || !UUID.test(aid)) return { error: 'connection_not_found' };
    accountId = aid;
  } else if (typeof ref === 'string' && ref.trim() !== '') {
    const a = await deps.db
      .selectFrom('accounts')
      .select('id')
      .where('partner_id', '=', partnerId)
      .where('cpo_external_ref', '=', ref.trim().slice(0, 120))
      .executeTakeFirst();
    if (!a) return { error: 'connection_not_found' };
    accountId = a.id;
  } else {
    return { error: 'target_required' };
  }
  const conns = await deps.db
    .selectFrom('connections as c')
    .innerJoin('accounts as a', 'a.id', 'c.account_id')
    .select(['c.id', 'c.status'])
    .where('a.id', '=', accountId)
    .where('a.partner_id', '=', partnerId)
    .orderBy('c.created_at')
    .execute();
  const active = conns.filter((c) => c.status === 'active');
  if (active.length === 1) return { connectionId: active[0]!.id };
  if (active.length > 1) return { error: 'ambiguous_connection' };
  return { error: conns.length ? 'connection_not_active' : 'connection_not_found' };
}

/**
 * Targets are resolved first (once per distinct target), then the valid items are written in one transaction in
 * (connection, month) order: concurrent batches take row locks in the same order (no deadlock), and duplicates of
 * one key inside a batch keep their request order (the first creates, the next are unchanged or updated). The
 * resolution is not the last word: recordMonthlyEnergy checks each connection again, locked, in the write
 * transaction (issue 10 item 7), so an archive that lands during the request rejects the item.
 */
export async function recordSessionsBatch(deps: Deps, partnerId: string, items: unknown[]): Promise<BatchResult> {
  const results: BatchItemResult[] = new Array(items.length);
  const counts = { created: 0, updated: 0, unchanged: 0, rejected: 0 };
  const cache = new Map<string, Target>();
  const pending: Array<{ index: number; item: Record<string, unknown>; connectionId: string; kwhOut: number | null }> = [];
  for (const [index, raw] of items.entries()) {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
      results[index] = { index, connection_id: null, month: null, kwh: null, status: 'rejected', error: 'invalid_request' };
      continue;
    }
    const item = raw as Record<string, unknown>;
    const units = parseKwh(item.kwh);
    const kwhOut = units !== null ? Number(formatDec(units, 2)) : typeof item.kwh === 'number' && Number.isFinite(item.kwh) ? item.kwh : null;
    const key = JSON.stringify([item.connection_id ?? null, item.account_id ?? null, item.cpo_external_ref ?? null]);
    let target = cache.get(key);
    if (!target) cache.set(key, (target = await resolveConnection(deps, partnerId, item)));
    if ('error' in target) {
      results[index] = { index, connection_id: null, month: typeof item.month === 'string' ? item.month : null, kwh: kwhOut, status: 'rejected', error: target.error };
    } else {
      pending.push({ index, item, connectionId: target.connectionId, kwhOut });
    }
  }
  const keyOf = (p: (typeof pending)[number]) => `${p.connectionId}|${String(p.item.month)}`;
  pending.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : a.index - b.index));
  if (pending.length) {
    await deps.db.transaction().execute(async (trx) => {
      for (const p of pending) {
        const res = await recordMonthlyEnergy(
          { ...deps, db: trx },
          { connectionId: p.connectionId, month: p.item.month, kwh: p.item.kwh, source: 'cpo' },
        );
        results[p.index] = {
          index: p.index,
          connection_id: p.connectionId,
          month: typeof p.item.month === 'string' ? p.item.month : null,
          kwh: res.kwh !== null ? Number(res.kwh) : p.kwhOut,
          status: res.status,
          ...(res.error ? { error: res.error } : {}),
        };
      }
    });
  }
  for (const r of results) counts[r.status] += 1;
  return { ok: true, results, counts };
}
