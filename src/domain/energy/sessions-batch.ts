// C2.4: POST /v1/sessions:batch. Each item names its connection (connection_id, account_id or cpo_external_ref,
// within the caller's partner only: C2.1) and goes through the one write of monthly deliveries (record-energy.ts).
// One bad item never fails the others.
import type { Deps } from '../../deps.ts';
import { formatDec } from '../../lib/decimal.ts';
import { BATCH_MAX_ITEMS, type BatchItemError } from '../../../schemas/http/sessions-batch.ts';
import { parseKwh, recordMonthlyEnergies, type RecordStatus } from './record-energy.ts';
import { normaliseExternalRef } from '../accounts/external-ref.ts';
import { textFault } from '../../lib/nul.ts';

export { BATCH_MAX_ITEMS };

export interface BatchItemResult {
  index: number;
  connection_id: string | null;
  month: string | null;
  kwh: number | null;
  status: RecordStatus;
  error?: BatchItemError;
}

export interface BatchResult {
  ok: true;
  results: BatchItemResult[];
  counts: { created: number; updated: number; unchanged: number; rejected: number };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Where an item goes, or why not; `connectionId` is the connection it addressed when one is known (D229). */
type Target = { connectionId: string } | { error: BatchItemError; connectionId: string | null };

const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID.test(v);
const refOf = (v: unknown) => (typeof v === 'string' ? normaliseExternalRef(v) || null : null);
/** text that is not (UTF-8) text names nothing (D112) */
const usableRef = (v: unknown) => {
  const r = refOf(v);
  return r !== null && textFault(r) === null ? r : null;
};
const named = (v: unknown) => v !== undefined && v !== null;

/**
 * Every item's connection within the partner (C2.1: another partner's records are not found), with three queries
 * whatever the number of items: the connections named by id, the accounts named by cpo_external_ref, and the
 * connections of the accounts named either way. An item naming several targets is resolved as
 * POST /v1/connections:update resolves them (D230): each must name something of the caller's, all the same
 * account, and connection_id then picks the connection.
 */
async function resolveTargets(deps: Deps, partnerId: string, items: Array<Record<string, unknown>>): Promise<Target[]> {
  // a uuid is compared in its lower-case form, the one the database returns
  const idOf = (i: Record<string, unknown>) => (isUuid(i.connection_id) ? i.connection_id.toLowerCase() : undefined);
  const accountIdOf = (i: Record<string, unknown>) => (isUuid(i.account_id) ? i.account_id.toLowerCase() : undefined);
  const connIds = [...new Set(items.map(idOf).filter((c) => c !== undefined))];
  const refs = [...new Set(items.map((i) => usableRef(i.cpo_external_ref)).filter((r) => r !== null))];
  const byId = new Map(
    connIds.length === 0
      ? []
      : (
          await deps.db
            .selectFrom('connections as c')
            .innerJoin('accounts as a', 'a.id', 'c.account_id')
            .select(['c.id', 'c.status', 'c.account_id'])
            .where('c.id', 'in', connIds)
            .where('a.partner_id', '=', partnerId)
            .execute()
        ).map((c) => [c.id, c]),
  );
  const accountByRef = new Map(
    refs.length === 0
      ? []
      : (await deps.db.selectFrom('accounts').select(['id', 'cpo_external_ref']).where('partner_id', '=', partnerId).where('cpo_external_ref', 'in', refs).execute()).map(
          (a) => [a.cpo_external_ref!, a.id],
        ),
  );
  const accountIds = [
    ...new Set(items.flatMap((i) => [accountIdOf(i), accountByRef.get(usableRef(i.cpo_external_ref) ?? '')]).filter((a) => a !== undefined)),
  ];
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
    const byConnection = named(i.connection_id);
    const byAccount = named(i.account_id);
    const byRef = refOf(i.cpo_external_ref) !== null;
    // D229: the connection the item addressed: the id it sent, as the API writes ids
    const sent = idOf(i) ?? null;
    if (!byConnection && !byAccount && !byRef) return { error: 'target_required', connectionId: null };
    // each target named must name something of the caller's (an account has at least one connection)
    const conn = sent !== null ? byId.get(sent) : undefined;
    const account = byAccount ? accountIdOf(i) : undefined;
    const refAccount = byRef ? accountByRef.get(usableRef(i.cpo_external_ref) ?? '') : undefined;
    if ((byConnection && !conn) || (byAccount && !connsOf.has(account ?? '')) || (byRef && refAccount === undefined)) {
      return { error: 'connection_not_found', connectionId: sent };
    }
    if (new Set([conn?.account_id, account, refAccount].filter((a) => a !== undefined)).size > 1) {
      return { error: 'ambiguous_connection', connectionId: sent };
    }
    if (conn) return conn.status === 'active' ? { connectionId: conn.id } : { error: 'connection_not_active', connectionId: conn.id };
    const conns = connsOf.get((account ?? refAccount)!)!;
    const active = conns.filter((c) => c.status === 'active');
    if (active.length === 1) return { connectionId: active[0]!.id };
    if (active.length > 1) return { error: 'ambiguous_connection', connectionId: null };
    // an account whose connections are all archived: the latest (as POST /v1/connections:update finds it)
    return { error: 'connection_not_active', connectionId: conns[conns.length - 1]!.id };
  });
}

/**
 * Targets are resolved first, then the items with a target are written together by the one write of monthly
 * deliveries (record-energy.ts recordMonthlyEnergies: a fixed number of statements whatever their count, the rules
 * applied per item in request order, the connection checked again in the write transaction).
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
      results[index] = { index, connection_id: target.connectionId, month: typeof item.month === 'string' ? item.month : null, kwh: kwhOut, status: 'rejected', error: target.error };
    } else {
      pending.push({ index, item, connectionId: target.connectionId, kwhOut });
    }
  }
  const written = await recordMonthlyEnergies(deps, pending.map((p) => ({ connectionId: p.connectionId, month: p.item.month, kwh: p.item.kwh, source: 'cpo' as const })));
  pending.forEach((p, k) => {
    const r = written[k]!;
    results[p.index] = {
      index: p.index,
      connection_id: p.connectionId,
      month: typeof p.item.month === 'string' ? p.item.month : null,
      kwh: r.kwh !== null ? Number(r.kwh) : p.kwhOut,
      status: r.status,
      ...(r.error ? { error: r.error } : {}),
    };
  });
  for (const r of results) counts[r.status] += 1;
  return { ok: true, results, counts };
}
