// One OCPP message through its adapter and the domain, shared by the live call handler and the operator's
// replay of a quarantined message (C4.11). Transient database errors are retried here; what remains is sorted:
// applied, unreadable (the adapter could not read it), unusable (the domain or the database refused its data),
// or DatabaseUnavailable (not the data's fault: the charger must retry, nothing is quarantined).
import type { Deps } from '../deps.ts';
import type { AsidePart, ChargerEvent } from '../domain/charging/events.ts';
import { publishChargerChanges } from '../domain/charging/charger-changes.ts';
import { type EventContext, handleChargerEvent, UnplaceableMessage } from '../domain/charging/handle-event.ts';
import { isDomainError } from '../domain/errors.ts';
import { dbErrorReason, isDataDbError, isTransientDbError, type RetryOptions, withTransientRetry } from '../db/transient.ts';
import type { ActionAdapter } from './adapter.ts';
import type { ConnectBatches } from './connect-batches.ts';
import type { IngestPipeline } from './ingest-pipeline.ts';
import { type Reader, Unusable } from './tolerant.ts';
import { throttledLog } from '../lib/throttled-log.ts';

/**
 * The events whose commit can change the charger's GET /chargers item (boot closes sessions provisionally, status
 * and transaction messages change is_charging, the session and the meter). A heartbeat that brings a silent
 * charger back online is seen by the streams' periodic re-read.
 */
const CHANGES_LIVE_VIEW = new Set<ChargerEvent['kind']>(['boot', 'status', 'transaction_started', 'transaction_updated', 'transaction_ended', 'meter_values']);

/** The database stayed unreachable through the retries. */
export class DatabaseUnavailable extends Error {
  constructor() {
    super('the database is unavailable');
  }
}

export type Applied =
  | { kind: 'applied'; response: Record<string, unknown>; aside: AsidePart[] }
  | { kind: 'unreadable'; reason: string }
  | { kind: 'unusable'; reason: string };

export interface ApplyOptions {
  /** a replayed 1.6 StartTransaction: the transactionId the charger was given when it was quarantined */
  transactionId?: string | undefined;
  /** group commit: a transaction message is written in the process's next batch (live sockets) */
  pipeline?: IngestPipeline | undefined;
  /** BootNotification and StatusNotification in batches (live sockets) */
  connect?: ConnectBatches | undefined;
}

/** Logs each repeat of a message's transaction after a transient database error. */
class RetryWarning implements RetryOptions {
  constructor(
    private readonly deps: Deps,
    private readonly chargerId: string,
  ) {}

  onRetry(err: unknown, attempt: number): void {
    // D222: once a minute per process with a count of the rest (an outage repeats it for every message)
    throttledLog(this.deps.logger).event('warn', 'db.transient_retry', { chargerId: this.chargerId, attempt, code: (err as { code?: string }).code }, 'ocpp: transient database error, retrying');
  }
}

export async function applyMessage(
  deps: Deps,
  ctx: EventContext,
  adapter: ActionAdapter,
  params: unknown,
  r: Reader,
  opts: ApplyOptions = {},
): Promise<Applied> {
  let ev: ChargerEvent;
  try {
    ev = adapter.toEvent(params, r);
  } catch (err) {
    if (err instanceof Unusable) return { kind: 'unreadable', reason: err.message };
    throw err;
  }
  if (opts.transactionId && ev.kind === 'transaction_started' && ev.chargerTransactionId === null) {
    ev = { ...ev, chargerTransactionId: opts.transactionId };
  }
  const event = ev;
  try {
    // C4.11: the whole transaction is repeated on a transient error (handlers are idempotent by content)
    const pipeline = adapter.transactional ? opts.pipeline : undefined;
    const connect = opts.connect?.handles(event) ? opts.connect : undefined;
    // an unnamed closure and a retry warning with a method: under `npm start` (tsx) every named closure made per
    // message is also wrapped to keep its name
    const outcome = await withTransientRetry(
      () => (pipeline ? pipeline.submit(ctx, event) : connect?.handles(event) ? connect.submit(ctx, event) : handleChargerEvent(deps, ctx, event)),
      new RetryWarning(deps, ctx.chargerId),
    );
    // C7.1: committed; the push streams of every process re-read this charger's live view
    if (CHANGES_LIVE_VIEW.has(event.kind)) publishChargerChanges(deps, [ctx.chargerId]);
    return { kind: 'applied', response: adapter.respond(outcome, params), aside: [...r.aside, ...(outcome.aside ?? [])] };
  } catch (err) {
    if (err instanceof UnplaceableMessage) return { kind: 'unusable', reason: err.message };
    if (isDomainError(err)) return { kind: 'unusable', reason: err.message };
    if (isDataDbError(err)) return { kind: 'unusable', reason: dbErrorReason(err) };
    if (isTransientDbError(err)) throw new DatabaseUnavailable();
    // a bug: kept for a replay after the code fix (a transaction message is never dropped)
    deps.logger.error({ err, chargerId: ctx.chargerId }, 'ocpp: message handling failed');
    return { kind: 'unusable', reason: `processing failed (${err instanceof Error ? err.name : 'error'})` };
  }
}
