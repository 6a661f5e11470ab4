// C4.11: an operator replays a quarantined message after fixing its cause (registering missing data, a code
// fix): the stored raw frame runs through the adapter and the domain again, and the outcome is recorded on the
// row. Idempotent: a message already applied is not run again and answers the same; the domain is idempotent by
// content anyway. A replayed 1.6 StartTransaction keeps the transactionId the charger was given.
import type { Deps } from '../deps.ts';
import { withTransientRetry } from '../db/transient.ts';
import { DomainError } from '../domain/errors.ts';
import { findQuarantined, quarantineParts, quarantineView, recordReplay } from '../domain/charging/quarantine.ts';
import { adapterFor } from './adapters.ts';
import { applyMessage } from './ingest.ts';
import { Reader } from './tolerant.ts';

function callOf(raw: string | null, payload: unknown): { method: string | null; params: unknown } {
  if (raw !== null) {
    try {
      const f = JSON.parse(raw) as unknown;
      if (Array.isArray(f) && f[0] === 2 && typeof f[2] === 'string') return { method: f[2], params: f[3] };
    } catch {
      // a row from before raw frames were kept: its jsonb payload below
    }
  }
  return { method: null, params: payload };
}

export async function replayQuarantined(deps: Deps, chargerId: string, id: string) {
  const row = await findQuarantined(deps, chargerId, id);
  if (row.kind !== 'message') throw new DomainError('quarantine_not_replayable', 'A part set aside from an applied message is kept for review only');
  if (row.replay_result === 'applied') return quarantineView(row);
  const { method, params } = callOf(row.raw, row.payload);
  const adapter = adapterFor(row.protocol, method ?? row.action);
  if (!adapter) throw new DomainError('quarantine_not_replayable', `${row.action} is not handled by this gateway`);
  const ack = (row.ack ?? null) as { transactionId?: unknown } | null;
  const transactionId = typeof ack?.transactionId === 'number' ? String(ack.transactionId) : undefined;
  const reader = new Reader(deps.clock());
  // a database fault (DatabaseUnavailable) is the HTTP edge's 500; the row stays as it was, to be replayed again
  const res = await applyMessage(deps, { chargerId }, adapter, params, reader, { transactionId });
  if (res.kind === 'applied') {
    await withTransientRetry(() => quarantineParts(deps, { chargerId, protocol: row.protocol, action: row.action, messageId: row.message_id, parts: res.aside }));
    await recordReplay(deps, row.id, { result: 'applied', reason: null });
  } else {
    await recordReplay(deps, row.id, { result: 'unusable', reason: res.reason });
  }
  deps.logger.info({ event: 'ocpp_quarantine_replayed', chargerId, quarantineId: row.id, action: row.action, result: res.kind }, 'ocpp: quarantined message replayed');
  return quarantineView(await findQuarantined(deps, chargerId, id));
}
