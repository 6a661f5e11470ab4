// Answering one call from a charger: protocol payload → ChargerEvent (the version's adapter) → domain → the
// protocol's response, checked against the official schema (C4.1). C4.11: a transaction message is answered
// only after it is committed, or, when its data cannot be used, after it is quarantined with its raw frame; a
// database that stays unreachable gets CALLERROR InternalError (the charger retries), and no CALLERROR carries
// database or stack text. The socket bookkeeping (order, replacement, commands) is live-registry.ts's.
import { createRPCError } from 'ocpp-rpc';
import type { Deps } from '../deps.ts';
import { withTransientRetry } from '../db/transient.ts';
import type { AsidePart } from '../domain/charging/events.ts';
import type { SocketCache } from '../domain/charging/handle-event.ts';
import type { RegistrationStatus } from '../domain/charging/connect-batch.ts';
import { QuarantineBudgetSpent, quarantineMessage, quarantineParts } from '../domain/charging/quarantine.ts';
import type { ActionAdapter } from './adapter.ts';
import { actionLabel, adapterFor, type OcppProtocol } from './adapters.ts';
import { ConnectBatches } from './connect-batches.ts';
import { IngestPipeline } from './ingest-pipeline.ts';
import { nestsDeeperThan } from '../lib/json-depth.ts';
import { SeenWriter } from './seen-writer.ts';
import { logNotable, NOTABLE_ACTIONS } from './notable-events.ts';
import { applyMessage, DatabaseUnavailable } from './ingest.ts';
import type { OcppMetrics } from './metrics.ts';
import { QuarantineRefusals } from './quarantine-refusals.ts';
import { RawFrames } from './raw-frames.ts';
import { type IncomingCall, type RpcClient, validateOutbound } from './rpc.ts';
import { Reader } from './tolerant.ts';
import { throttledLog } from '../lib/throttled-log.ts';

export type { OcppProtocol } from './adapters.ts';

/** What the call handler needs of the socket a call arrived on. */
export interface CallSocket {
  client: RpcClient;
  connectionId: string;
  protocol: OcppProtocol;
  /** when (deps.clock, ms) this connection last wrote last_seen_at; 0 = not yet */
  seenWrittenAt: number;
  /** derived per-charger values kept for the socket's lifetime (see EventContext.cache) */
  cache: SocketCache;
  /** D135: the registration status this connection was last answered (or the operator's when it opened) */
  registration: RegistrationStatus;
}

/** D135: what a Pending charger may send besides BootNotification (what the operator may trigger to look at it). */
const PENDING_ALLOWED = new Set(['Heartbeat', 'StatusNotification']);

/** C4.10: log lines carry at most 2 KiB of charger-supplied text. */
const cap = (s: string, max = 2048) => (s.length > max ? s.slice(0, max) + '…' : s);
const isRpcError = (err: unknown) => err instanceof Error && typeof (err as { rpcErrorCode?: unknown }).rpcErrorCode === 'string';
const identityOf = (sock: CallSocket) => cap(String(sock.client.identity ?? ''), 100);
const GENERIC = 'The message could not be processed; retry later';

export class CallHandler {
  private readonly raw = new RawFrames();
  /** D156: a charger past its quarantine budget is refused, counted and logged once an hour */
  private readonly refusals: QuarantineRefusals;

  /** last_seen_at of all sockets, written together (seen-writer.ts) */
  readonly seen: SeenWriter;
  /** group commit of transaction messages (ingest-pipeline.ts); undefined when INGEST_BATCH_MAX is 0 */
  readonly pipeline: IngestPipeline | undefined;
  /** the connect path in batches (connect-batches.ts); undefined when INGEST_BATCH_MAX is 0 */
  readonly connect: ConnectBatches | undefined;

  constructor(
    private readonly deps: Deps,
    private readonly metrics: OcppMetrics,
  ) {
    this.seen = new SeenWriter(deps);
    this.refusals = new QuarantineRefusals(deps.logger, metrics, deps.config.OCPP_QUARANTINE_BYTES_PER_DAY);
    this.pipeline =
      deps.config.INGEST_BATCH_MAX > 0
        ? new IngestPipeline(deps, {
            maxBatch: deps.config.INGEST_BATCH_MAX,
            flushMs: deps.config.INGEST_FLUSH_MS,
            // each batch in flight holds a pooled connection; the rest of the pool serves HTTP and jobs
            maxInFlight: deps.config.INGEST_BATCHES_IN_FLIGHT,
            onBatch: (b) => {
              metrics.ingestBatch.observe({ outcome: b.outcome }, b.size);
              if (b.setBased) metrics.ingestMessages.inc({ path: b.oneStatement ? 'one_statement' : 'set_based' }, b.setBased);
              if (b.size - b.setBased) metrics.ingestMessages.inc({ path: b.outcome === 'fallback' ? 'fallback' : 'handler' }, b.size - b.setBased);
            },
          })
        : undefined;
    this.connect = deps.config.INGEST_BATCH_MAX > 0 ? new ConnectBatches(deps, metrics) : undefined;
  }

  /** Starts keeping the raw text of a socket's inbound calls until they are answered (for the quarantine). */
  watch(client: RpcClient): void {
    this.raw.watch(client);
  }

  /** C4.1: every answer the gateway sends is checked against the protocol's official schema first. */
  async answer(sock: CallSocket, chargerId: string, call: IncomingCall): Promise<Record<string, unknown>> {
    const raw = this.raw.take(sock.client, call.messageId);
    let response: Record<string, unknown>;
    try {
      response = await this.onCall(sock, chargerId, call, raw);
    } catch (err) {
      // C4.11: ocpp-rpc would put any Error's message into the CALLERROR; only our own RPC errors pass
      if (isRpcError(err)) throw err;
      this.deps.logger.error({ err, chargerId, method: call.method }, 'ocpp: message handling failed');
      this.metrics.messages.inc({ protocol: sock.protocol, action: call.method, outcome: 'error' });
      throw createRPCError('InternalError', GENERIC);
    }
    const invalid = validateOutbound(sock.protocol, `urn:${call.method}.conf`, response);
    if (invalid) {
      this.deps.logger.error({ chargerId, method: call.method, invalid }, 'ocpp: our response failed its schema');
      this.metrics.messages.inc({ protocol: sock.protocol, action: call.method, outcome: 'error' });
      throw createRPCError('InternalError', 'The response could not be built');
    }
    return response;
  }

  private async onCall(sock: CallSocket, chargerId: string, call: IncomingCall, raw: string | undefined): Promise<Record<string, unknown>> {
    const { protocol } = sock;
    const { method } = call;
    this.touch(sock, chargerId);
    // D135: a charger the operator has not accepted sends nothing but its BootNotification (OCPP 2.0.1 B02/B03, 1.6
    // §4.2): anything else is SecurityError, stored nowhere, and the charger keeps it until it is accepted
    if (sock.registration !== 'Accepted' && method !== 'BootNotification' && !(sock.registration === 'Pending' && PENDING_ALLOWED.has(method))) {
      this.outcome(protocol, actionLabel(protocol, method), 'not_accepted');
      throw createRPCError('SecurityError', `The charger is ${sock.registration}: only BootNotification is taken until it is accepted`);
    }
    if (method === 'DataTransfer') {
      this.outcome(protocol, method, 'ok');
      return { status: 'UnknownVendorId' };
    }
    const adapter = adapterFor(protocol, method);
    if (!adapter) {
      // a label per name the charger makes up would grow the metrics without bound (D130): every unhandled action is `other`
      this.outcome(protocol, 'other', 'not_implemented');
      throw createRPCError(protocol === 'ocpp1.6' ? 'NotSupported' : 'NotImplemented', `${cap(method, 100)} is not handled by this gateway`);
    }
    const reader = new Reader(this.deps.clock());
    let res;
    try {
      res = await applyMessage(this.deps, { chargerId, cache: sock.cache }, adapter, call.params, reader, { pipeline: this.pipeline, connect: this.connect });
    } catch (err) {
      if (!(err instanceof DatabaseUnavailable)) throw err;
      if (adapter.neverError) return this.tolerate(chargerId, protocol, method, adapter, 'database unavailable');
      // C4.11: nothing is quarantined for a database fault; the charger keeps the message and retries
      this.outcome(protocol, method, 'unavailable');
      // D222: once a minute per process with a count of the rest (an outage refuses every message)
      throttledLog(this.deps.logger).event('error', 'db.unavailable_refused', { chargerId, method }, 'ocpp: database unavailable, message refused with InternalError');
      throw createRPCError('InternalError', GENERIC);
    } finally {
      for (const k of reader.quirks) this.metrics.quirks.inc({ kind: k });
    }
    // D137: faults, security events and failed updates the charger reports reach the log
    if (NOTABLE_ACTIONS.has(method)) logNotable(this.deps.logger, chargerId, protocol, method, call.params);
    if (res.kind === 'applied') {
      // D135: the answer to a BootNotification is the connection's registration from now on
      if (method === 'BootNotification') sock.registration = (res.response.status as RegistrationStatus | undefined) ?? sock.registration;
      if (res.aside.length) await this.keepParts(sock, chargerId, call, res.aside);
      this.outcome(protocol, method, 'ok');
      return res.response;
    }
    if (adapter.neverError) return this.tolerate(chargerId, protocol, method, adapter, res.reason);
    if (adapter.transactional) return this.quarantine(sock, chargerId, call, raw, adapter, res.reason);
    this.outcome(protocol, method, 'error');
    if (res.kind === 'unreadable') throw createRPCError(protocol === 'ocpp1.6' ? 'FormationViolation' : 'FormatViolation', cap(res.reason, 300));
    throw createRPCError('InternalError', GENERIC);
  }

  /**
   * C4.8: last_seen_at is written at most every min(30 s, heartbeat/4), far inside the 2-heartbeat online
   * window, by the process's SeenWriter (one statement for all sockets every 250 ms). A connection replaced in
   * another process learns it on that write and steps aside. A failed write is noted again on the next message and
   * never fails this one.
   */
  private touch(sock: CallSocket, chargerId: string): void {
    const now = this.deps.clock().getTime();
    const every = Math.min(30_000, (this.deps.config.HEARTBEAT_INTERVAL_SECONDS * 1000) / 4);
    if (sock.seenWrittenAt !== 0 && now - sock.seenWrittenAt < every && now >= sock.seenWrittenAt) return;
    sock.seenWrittenAt = now;
    this.seen.note(chargerId, sock, () => {
      sock.client.close({ code: 1000, reason: 'Replaced by a newer connection' }).catch(() => {});
    });
  }

  /** C4.4: a StatusNotification never gets an error. */
  private tolerate(chargerId: string, protocol: string, method: string, adapter: ActionAdapter, reason: string) {
    this.metrics.quirks.inc({ kind: 'invalid_status_notification' });
    this.deps.logger.warn({ chargerId, reason: cap(reason) }, 'ocpp: status notification not applied, acknowledged anyway');
    this.outcome(protocol, method, 'tolerated');
    return adapter.respond({ kind: 'ack' });
  }

  /**
   * Counts a message's outcome. A method, not a closure made per message: under `npm start` (tsx) each named
   * closure is also wrapped to keep its name, work paid on every message.
   */
  private outcome(protocol: string, method: string, outcome: string): void {
    this.metrics.messages.inc({ protocol, action: method, outcome });
  }

  /** C4.11: the unreadable parts of an applied message, kept before the answer (durable before the ack). */
  private async keepParts(sock: CallSocket, chargerId: string, call: IncomingCall, parts: AsidePart[]): Promise<void> {
    const budget = this.deps.config.OCPP_QUARANTINE_BYTES_PER_DAY;
    const q = { chargerId, protocol: sock.protocol, action: call.method, messageId: call.messageId, parts, budget };
    let ids: string[];
    try {
      ids = await withTransientRetry(() => quarantineParts(this.deps, q));
    } catch (err) {
      // D156: the usable part is committed (the charger's resend stores it once); the parts are not kept, so no ack
      if (err instanceof QuarantineBudgetSpent) throw this.refusals.refuse(chargerId, identityOf(sock), call.method, sock.protocol);
      // the applied part is committed and idempotent: the charger's retry stores the parts once
      this.deps.logger.error({ err, chargerId }, 'ocpp: could not keep the unreadable parts of a message');
      throw createRPCError('InternalError', GENERIC);
    }
    this.metrics.quarantined.inc({ action: call.method }, parts.length);
    this.deps.logger.warn(
      { event: 'ocpp.quarantine_parts', identity: identityOf(sock), chargerId, action: call.method, messageId: cap(call.messageId, 100), quarantineIds: ids, reasons: cap(parts.map((p) => p.reason).join('; ')) },
      'ocpp: unreadable parts of a message kept aside',
    );
  }

  private async quarantine(sock: CallSocket, chargerId: string, call: IncomingCall, raw: string | undefined, adapter: ActionAdapter, reason: string) {
    const { protocol } = sock;
    let ack: Record<string, unknown>;
    let id: string;
    try {
      ack = adapter.unusableAck ? await withTransientRetry(() => adapter.unusableAck!(this.deps, chargerId, call.params)) : {};
      // the raw text is kept for every live call; rebuilt only if it is missing, and never from a hostile depth
      const frame = raw ?? (nestsDeeperThan(call.params, 64) ? '(frame not kept: nested too deep)' : JSON.stringify([2, call.messageId, call.method, call.params]));
      const budget = this.deps.config.OCPP_QUARANTINE_BYTES_PER_DAY;
      const q = { chargerId, protocol, action: call.method, messageId: call.messageId, raw: frame, payload: call.params, reason, ack: Object.keys(ack).length ? ack : null, budget };
      id = await withTransientRetry(() => quarantineMessage(this.deps, q));
    } catch (err) {
      // D156: past the charger's budget nothing is kept, so nothing is acknowledged
      if (err instanceof QuarantineBudgetSpent) throw this.refusals.refuse(chargerId, identityOf(sock), call.method, protocol);
      // C4.11: never an acknowledgement without a durable record
      this.deps.logger.error({ err, chargerId, action: call.method }, 'ocpp: could not quarantine a message');
      this.metrics.messages.inc({ protocol, action: call.method, outcome: 'unavailable' });
      throw createRPCError('InternalError', GENERIC);
    }
    this.metrics.quarantined.inc({ action: call.method });
    this.metrics.messages.inc({ protocol, action: call.method, outcome: 'quarantined' });
    // item 9: one structured line per quarantined message
    this.deps.logger.warn(
      { event: 'ocpp.quarantine', identity: identityOf(sock), chargerId, action: call.method, messageId: cap(call.messageId, 100), reason: cap(reason), quarantineId: id },
      'ocpp: message quarantined',
    );
    return ack;
  }
}
