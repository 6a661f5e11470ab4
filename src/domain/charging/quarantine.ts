// C4.1: an unusable transaction message is acknowledged to the charger and kept here verbatim for review.
import { isoUtc } from '../../lib/time.ts';
import type { Deps } from '../../deps.ts';

export async function quarantineMessage(
  deps: Deps,
  q: { chargerId: string; protocol: string; action: string; messageId: string | null; payload: unknown; reason: string },
): Promise<void> {
  await deps.db
    .insertInto('ocpp_quarantine')
    .values({
      charger_id: q.chargerId,
      protocol: q.protocol,
      action: q.action,
      message_id: q.messageId,
      payload: JSON.stringify(q.payload ?? null),
      reason: q.reason.slice(0, 2000),
      received_at: deps.clock(),
    })
    .execute();
}

/** GET /admin/chargers/:charger_id/quarantine: the kept messages of a charger, newest first. */
export async function listQuarantine(deps: Deps, chargerId: string, limit = 100) {
  const rows = await deps.db
    .selectFrom('ocpp_quarantine')
    .selectAll()
    .where('charger_id', '=', chargerId)
    .orderBy('received_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return {
    charger_id: chargerId,
    messages: rows.map((r) => ({
      id: r.id,
      protocol: r.protocol,
      action: r.action,
      message_id: r.message_id,
      payload: r.payload,
      reason: r.reason,
      received_at: isoUtc(r.received_at),
    })),
  };
}
