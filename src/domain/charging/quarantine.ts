// C4.1/C4.11: an unusable transaction message is acknowledged to the charger and kept here, the raw frame as
// text (NUL escapes and all), with its reason; an unreadable part of an applied message is kept as kind 'part'.
// An operator lists them and replays a message after a fix (src/ocpp/replay.ts); the outcome is recorded here.
import { sql } from 'kysely';
import { nestsDeeperThan } from '../../lib/json-depth.ts';
import { isoUtc } from '../../lib/time.ts';
import type { Deps } from '../../deps.ts';
import { DomainError } from '../errors.ts';
import type { AsidePart } from './events.ts';
import { cutText } from '../../lib/nul.ts';
import { chargeQuarantineBudget, QuarantineBudgetSpent } from './quarantine-budget.ts';

export { QuarantineBudgetSpent } from './quarantine-budget.ts';

/** PostgreSQL text cannot hold U+0000: a stray one (never in a frame JSON.parse accepted) is written as its escape */
const storable = (s: string) => s.replace(/\u0000/g, '\\u0000');

/** Deepest nesting kept as jsonb; a deeper payload is kept as raw text only (a charger never sends one). */
const MAX_JSONB_DEPTH = 32;

/**
 * D156: the structured copy is kept only of a frame of at most this many characters. Raw is the record (a replay
 * reads it); a copy of a large frame doubled what a hostile charger could write (a 250 KB frame was kept twice).
 * A real charger's transaction message is a few KB.
 */
export const MAX_JSONB_FRAME_CHARS = 16_384;

/**
 * The payload as jsonb when jsonb can hold it and the frame is small: jsonb rejects \u0000 and lone surrogate
 * escapes, and a payload nested deeper than MAX_JSONB_DEPTH is not worth the recursion (JSON.stringify's and
 * PostgreSQL's); raw keeps all.
 */
function jsonbOrNull(payload: unknown, raw: string): string | null {
  if (payload === undefined || raw.length > MAX_JSONB_FRAME_CHARS || nestsDeeperThan(payload, MAX_JSONB_DEPTH)) return null;
  const text = JSON.stringify(payload);
  return /\\u(0000|d[89a-f])/i.test(text) ? null : text;
}

/** A set-aside part as text; one nested absurdly deep is described, not serialised. */
function partText(part: unknown): string {
  if (nestsDeeperThan(part ?? null, MAX_JSONB_DEPTH)) return JSON.stringify(`(a part nested deeper than ${MAX_JSONB_DEPTH} levels; not kept)`);
  return JSON.stringify(part ?? null);
}

export interface QuarantineInput {
  chargerId: string;
  protocol: string;
  action: string;
  messageId: string | null;
  /** the inbound frame as received */
  raw: string;
  payload: unknown;
  reason: string;
  /** what the charger was answered, when it carries something a replay must reuse (a 1.6 transactionId) */
  ack?: Record<string, unknown> | null;
  /** D156: the charger's quarantine budget in bytes per rolling day; undefined = none (an operator's replay) */
  budget?: number | undefined;
}

/** Bytes a row costs against the budget: what it writes of the charger's text (UTF-8). */
const sizeOf = (...texts: Array<string | null>) => texts.reduce((n, t) => n + (t === null ? 0 : Buffer.byteLength(t)), 0);

/** Inserts quarantine rows, first charging the charger's budget when there is one (D156), in one transaction. */
async function keepWithin<T>(deps: Deps, chargerId: string, budget: number | undefined, bytes: number, insert: (db: Deps['db']) => Promise<T>): Promise<T> {
  if (budget === undefined) return insert(deps.db);
  return deps.db.transaction().execute(async (trx) => {
    if (!(await chargeQuarantineBudget(trx, chargerId, bytes, budget, deps.clock()))) throw new QuarantineBudgetSpent(chargerId);
    return insert(trx);
  });
}

/**
 * Keeps a whole message; returns the quarantine id. Throws when it cannot be stored (then nothing is acked), and
 * QuarantineBudgetSpent when the charger's budget is spent (D156).
 */
export async function quarantineMessage(deps: Deps, q: QuarantineInput): Promise<string> {
  const raw = storable(q.raw);
  const payload = jsonbOrNull(q.payload, raw);
  const row = await keepWithin(deps, q.chargerId, q.budget, sizeOf(raw, payload), (db) =>
    db
      .insertInto('ocpp_quarantine')
      .values({
        charger_id: q.chargerId,
        protocol: q.protocol,
        action: q.action,
        message_id: q.messageId === null ? null : cutText(storable(q.messageId), 200),
        kind: 'message',
        raw,
        payload,
        ack: q.ack ? JSON.stringify(q.ack) : null,
        reason: cutText(storable(q.reason), 2000),
        received_at: deps.clock(),
      })
      .returning('id')
      .executeTakeFirstOrThrow(),
  );
  return row.id;
}

/**
 * Keeps the unreadable parts of an applied message (a resent message sets the same part aside once). Under a budget
 * (D156) they count against it as the whole message does, a part already kept included (a resent message's parts
 * are counted again; the budget errs towards keeping less).
 */
export async function quarantineParts(
  deps: Deps,
  q: { chargerId: string; protocol: string; action: string; messageId: string | null; parts: AsidePart[]; budget?: number | undefined },
): Promise<string[]> {
  if (q.parts.length === 0) return [];
  const values = q.parts.map((p) => ({
    charger_id: q.chargerId,
    protocol: q.protocol,
    action: q.action,
    message_id: q.messageId === null ? null : cutText(storable(q.messageId), 200),
    kind: 'part' as const,
    raw: storable(partText(p.part)),
    payload: null,
    reason: cutText(storable(p.reason), 2000),
    received_at: deps.clock(),
  }));
  const rows = await keepWithin(deps, q.chargerId, q.budget, sizeOf(...values.map((v) => v.raw)), (db) =>
    db
      .insertInto('ocpp_quarantine')
      .values(values)
      .onConflict((oc) => oc.expression(sql`charger_id, action, md5(raw)`).where('kind', '=', 'part').doNothing())
      .returning('id')
      .execute(),
  );
  return rows.map((r) => r.id);
}

export type QuarantineRow = Awaited<ReturnType<typeof findQuarantined>>;

export async function findQuarantined(deps: Deps, chargerId: string, id: string) {
  if (!/^\d{1,18}$/.test(id)) throw new DomainError('not_found', 'No such quarantined message');
  const row = await deps.db.selectFrom('ocpp_quarantine').selectAll().where('charger_id', '=', chargerId).where('id', '=', id).executeTakeFirst();
  if (!row) throw new DomainError('not_found', 'No such quarantined message');
  return row;
}

export async function recordReplay(deps: Deps, id: string, outcome: { result: 'applied' | 'unusable'; reason: string | null }) {
  await deps.db
    .updateTable('ocpp_quarantine')
    .set({ replayed_at: deps.clock(), replay_result: outcome.result, replay_reason: outcome.reason === null ? null : cutText(storable(outcome.reason), 2000) })
    .where('id', '=', id)
    .execute();
}

/** The admin view of one row. */
export function quarantineView(r: QuarantineRow) {
  return {
    id: r.id,
    kind: r.kind,
    protocol: r.protocol,
    action: r.action,
    message_id: r.message_id,
    raw: r.raw,
    payload: r.payload ?? null,
    // D269: what the charger was told (an unusable start's transactionId and verdict: whether the car charged)
    ack: r.ack ?? null,
    reason: r.reason,
    received_at: isoUtc(r.received_at),
    replayed_at: r.replayed_at ? isoUtc(r.replayed_at) : null,
    replay_result: r.replay_result,
    replay_reason: r.replay_reason,
  };
}

/** GET /admin/chargers/:charger_id/quarantine: the kept messages and parts of a charger, newest first. */
export async function listQuarantine(deps: Deps, chargerId: string, limit = 100) {
  const rows = await deps.db
    .selectFrom('ocpp_quarantine')
    .selectAll()
    .where('charger_id', '=', chargerId)
    .orderBy('received_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return { charger_id: chargerId, messages: rows.map(quarantineView) };
}

/**
 * GET /admin/quarantine: what the whole fleet's chargers sent that could not be used, newest first, a page at a time
 * (D167). Without the frame itself (a page of a fleet's frames could be gigabytes): its length in characters, the
 * reason and the replay's outcome; the charger's own list has the frame.
 */
export async function listFleetQuarantine(
  deps: Deps,
  q: { limit: number; offset: number; since?: string | undefined; kind?: 'message' | 'part' | undefined; replayed?: boolean | undefined },
) {
  let base = deps.db.selectFrom('ocpp_quarantine');
  if (q.since !== undefined) base = base.where('received_at', '>=', new Date(q.since));
  if (q.kind !== undefined) base = base.where('kind', '=', q.kind);
  if (q.replayed !== undefined) base = base.where('replayed_at', q.replayed ? 'is not' : 'is', null);
  const c = await base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await base
    .select(['id', 'charger_id', 'kind', 'protocol', 'action', 'message_id', 'ack', 'reason', 'received_at', 'replayed_at', 'replay_result', 'replay_reason'])
    .select(sql<number | null>`char_length(raw)`.as('raw_chars'))
    .orderBy('received_at', 'desc')
    .orderBy('id', 'desc')
    .limit(q.limit)
    .offset(q.offset)
    .execute();
  return {
    messages: rows.map((m) => ({
      id: m.id,
      charger_id: m.charger_id,
      kind: m.kind,
      protocol: m.protocol,
      action: m.action,
      message_id: m.message_id,
      raw_chars: m.raw_chars === null ? null : Number(m.raw_chars),
      ack: m.ack ?? null,
      reason: m.reason,
      received_at: isoUtc(m.received_at),
      replayed_at: m.replayed_at ? isoUtc(m.replayed_at) : null,
      replay_result: m.replay_result,
      replay_reason: m.replay_reason,
    })),
    limit: q.limit,
    offset: q.offset,
    count: Number(c.n),
  };
}
