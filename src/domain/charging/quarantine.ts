// C4.1: an unusable transaction message is acknowledged to the charger and kept here verbatim for review.
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
