// The sockets this process holds, one per charger; the only in-memory state of the gateway (C4.8: the rest is
// in PostgreSQL). It answers each charger's calls in order, and executes operator commands for its chargers.
import crypto from 'node:crypto';
import { createRPCError } from 'ocpp-rpc';
import type { Deps } from '../deps.ts';
import {
  claimCommand,
  type CommandExecutor,
  pendingCommandIds,
  recordCommandOutcome,
} from '../domain/chargers/commands.ts';
import { handleChargerEvent, UnplaceableMessage } from '../domain/charging/handle-event.ts';
import { currentConnections, markConnected, markDisconnected, markSeen, releaseInstance } from '../domain/charging/live-state.ts';
import { quarantineMessage } from '../domain/charging/quarantine.ts';
import { isDomainError } from '../domain/errors.ts';
import type { ActionAdapter } from './adapter.ts';
import type { OcppMetrics } from './metrics.ts';
import { type IncomingCall, type RpcClient, TimeoutError, validateOutbound } from './rpc.ts';
import { Reader, Unusable } from './tolerant.ts';
import { v16Actions } from './v16/index.ts';
import { v201Actions } from './v201/index.ts';

export interface OcppSession {
  chargerId: string;
  protocol: 'ocpp1.6' | 'ocpp2.0.1';
}

interface Held {
  client: RpcClient;
  connectionId: string;
  /** true once this connection's live-state row is written: only then can the row tell it was superseded */
  recorded: boolean;
  protocol: OcppSession['protocol'];
  /** C4.4: every charger message is answered in the order received */
  queue: Promise<unknown>;
  /** when (deps.clock, ms) this connection last wrote last_seen_at; 0 = not yet */
  seenWrittenAt: number;
  /** derived per-charger values kept for the socket's lifetime (see EventContext.cache) */
  cache: { maxPowerW?: number };
}

export class LiveRegistry implements CommandExecutor {
  readonly instanceId = crypto.randomUUID();
  private readonly held = new Map<string, Held>();
  private poller: NodeJS.Timeout | undefined;
  private polling = false;
  private readonly closing = new Set<Promise<unknown>>();

  constructor(
    private readonly deps: Deps,
    private readonly metrics: OcppMetrics,
  ) {}

  /** A new authenticated socket. A newer connection replaces an older one (C4.2). */
  attach(client: RpcClient, session: OcppSession): void {
    const { chargerId, protocol } = session;
    const connectionId = crypto.randomUUID();
    const older = this.held.get(chargerId);
    const held: Held = { client, connectionId, recorded: false, protocol, queue: Promise.resolve(), seenWrittenAt: 0, cache: {} };
    this.held.set(chargerId, held);
    held.queue = markConnected(this.deps, chargerId, { protocol, connectionId, instanceId: this.instanceId })
      .then(() => {
        held.recorded = true;
      })
      .catch((err) => this.deps.logger.error({ err, chargerId }, 'ocpp: could not record the connection'));
    if (older) void older.client.close({ code: 1000, reason: 'Replaced by a newer connection', force: true });
    this.metrics.connected.inc({ protocol });

    const wildcard = async (call: IncomingCall) => {
      const run = held.queue.then(() => this.answer(held, chargerId, call));
      held.queue = run.catch(() => {});
      return run;
    };
    // ocpp-rpc types handle() as a union of handler maps; a wildcard handler receives IncomingCall
    client.handle(wildcard as unknown as Parameters<RpcClient['handle']>[0]);
    client.on('badMessage', () => this.metrics.messages.inc({ protocol, action: 'unknown', outcome: 'bad_frame' }));
    client.once('close', () => {
      this.metrics.connected.dec({ protocol });
      // its close never clears the newer connection's state: both the map and the row are keyed by connection
      if (this.held.get(chargerId)?.connectionId === connectionId) this.held.delete(chargerId);
      const done = held.queue.then(() => markDisconnected(this.deps, chargerId, connectionId)).catch(() => {});
      this.closing.add(done);
      void done.finally(() => this.closing.delete(done));
    });
    this.ensurePoller();
  }

  private adapters(protocol: OcppSession['protocol']): Record<string, ActionAdapter> {
    return protocol === 'ocpp1.6' ? v16Actions : v201Actions;
  }

  private async onCall(held: Held, chargerId: string, call: IncomingCall): Promise<Record<string, unknown>> {
    const { protocol } = held;
    const { method } = call;
    // C4.8: last_seen_at is written at most every min(30 s, heartbeat/4), far inside the 2-heartbeat online
    // window. A connection replaced in another process learns it on that write and steps aside (between
    // writes the superseded sweep in ensurePoller finds it).
    const now = this.deps.clock().getTime();
    const every = Math.min(30_000, (this.deps.config.HEARTBEAT_INTERVAL_SECONDS * 1000) / 4);
    if (held.seenWrittenAt === 0 || now - held.seenWrittenAt >= every || now < held.seenWrittenAt) {
      held.seenWrittenAt = now;
      if (!(await markSeen(this.deps, chargerId, held.connectionId))) {
        void held.client.close({ code: 1000, reason: 'Replaced by a newer connection' });
      }
    }
    const outcomeLabel = (o: string) => this.metrics.messages.inc({ protocol, action: method, outcome: o });
    if (method === 'DataTransfer') {
      outcomeLabel('ok');
      return { status: 'UnknownVendorId' };
    }
    const adapter = this.adapters(protocol)[method];
    if (!adapter) {
      outcomeLabel('not_implemented');
      throw createRPCError(protocol === 'ocpp1.6' ? 'NotSupported' : 'NotImplemented', `${method} is not handled by this gateway`);
    }
    const reader = new Reader();
    let ev;
    try {
      ev = adapter.toEvent(call.params, reader);
    } catch (err) {
      if (!(err instanceof Unusable)) throw err;
      this.countQuirks(reader);
      if (adapter.neverError) {
        this.metrics.quirks.inc({ kind: 'invalid_status_notification' });
        outcomeLabel('tolerated');
        return adapter.respond({ kind: 'ack' });
      }
      if (adapter.transactional) return this.quarantine(chargerId, protocol, call, adapter, err.message);
      outcomeLabel('error');
      throw createRPCError(protocol === 'ocpp1.6' ? 'FormationViolation' : 'FormatViolation', err.message);
    }
    this.countQuirks(reader);
    let response: Record<string, unknown>;
    try {
      response = adapter.respond(await handleChargerEvent(this.deps, { chargerId, cache: held.cache }, ev));
    } catch (err) {
      if (err instanceof UnplaceableMessage) return this.quarantine(chargerId, protocol, call, adapter, err.message);
      outcomeLabel('error');
      this.deps.logger.error({ err, chargerId, method }, 'ocpp: message handling failed');
      if (adapter.transactional) return this.quarantine(chargerId, protocol, call, adapter, isDomainError(err) ? err.message : 'internal error');
      throw createRPCError('InternalError', 'The message could not be processed');
    }
    outcomeLabel('ok');
    return response;
  }

  /** C4.1: every answer the gateway sends is checked against the protocol's official schema first. */
  private async answer(held: Held, chargerId: string, call: IncomingCall): Promise<Record<string, unknown>> {
    const response = await this.onCall(held, chargerId, call);
    const invalid = validateOutbound(held.protocol, `urn:${call.method}.conf`, response);
    if (invalid) {
      this.deps.logger.error({ chargerId, method: call.method, invalid }, 'ocpp: our response failed its schema');
      this.metrics.messages.inc({ protocol: held.protocol, action: call.method, outcome: 'error' });
      throw createRPCError('InternalError', 'The response could not be built');
    }
    return response;
  }

  private countQuirks(r: Reader): void {
    for (const k of r.quirks) this.metrics.quirks.inc({ kind: k });
  }

  private async quarantine(chargerId: string, protocol: string, call: IncomingCall, adapter: ActionAdapter, reason: string) {
    await quarantineMessage(this.deps, { chargerId, protocol, action: call.method, messageId: call.messageId, payload: call.params, reason });
    this.metrics.quarantined.inc({ action: call.method });
    this.metrics.messages.inc({ protocol, action: call.method, outcome: 'quarantined' });
    const ack = adapter.unusableAck ? await adapter.unusableAck(this.deps) : {};
    return ack;
  }

  // ---- CommandExecutor (C6.6) ----

  validate(protocol: string, action: string, payload: unknown): string | null {
    return validateOutbound(protocol, `urn:${action}.req`, payload);
  }

  async execute(commandId: string): Promise<void> {
    const cmd = await claimCommand(this.deps, commandId);
    if (!cmd) return;
    const held = this.held.get(cmd.charger_id);
    if (!held) return recordCommandOutcome(this.deps, cmd.id, { status: 'failed', error: 'charger_offline' });
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    const labels = { protocol: held.protocol, action: cmd.action };
    try {
      // ocpp-rpc's callConcurrency 1: at most one call at a time per charger (C4.2)
      const response = await held.client.call(cmd.action, cmd.payload, { callTimeoutMs: this.deps.config.OCPP_CALL_TIMEOUT_SECONDS * 1000 });
      this.metrics.callLatency.observe({ ...labels, outcome: 'answered' }, seconds());
      await recordCommandOutcome(this.deps, cmd.id, { status: 'answered', response });
    } catch (err) {
      const e = err as { name?: string; rpcErrorCode?: string; message?: string };
      const timeout = err instanceof TimeoutError;
      this.metrics.callLatency.observe({ ...labels, outcome: timeout ? 'timeout' : 'error' }, seconds());
      await recordCommandOutcome(
        this.deps,
        cmd.id,
        timeout ? { status: 'timeout', error: 'charger_timeout' } : { status: 'failed', error: e.rpcErrorCode ?? e.message ?? 'error' },
      );
    }
  }

  /**
   * Cross-process work, while this process holds sockets: commands for our chargers written by another process
   * are picked up every 250 ms; every 2 s, sockets another process has taken over (a newer connection of the
   * same charger, C4.2) are closed.
   */
  private ensurePoller(): void {
    if (this.poller) return;
    let tick = 0;
    this.poller = setInterval(() => {
      if (this.polling || this.held.size === 0) return;
      this.polling = true;
      const sweep = tick++ % 8 === 0;
      pendingCommandIds(this.deps, this.instanceId)
        .then((ids) => Promise.all(ids.map((id) => this.execute(id))))
        .then(() => (sweep ? this.closeSuperseded() : undefined))
        .catch((err) => this.deps.logger.warn({ err }, 'ocpp: command poll failed'))
        .finally(() => {
          this.polling = false;
        });
    }, 250);
    this.poller.unref();
  }

  private async closeSuperseded(): Promise<void> {
    // Only connections whose own row was written before the read can be judged by it: a socket still in its
    // markConnected (a ramp-up or a storm) would otherwise be taken for the stale one and dropped mid-boot.
    const judged = new Map([...this.held].filter(([, h]) => h.recorded));
    if (judged.size === 0) return;
    const current = await currentConnections(this.deps, [...judged.keys()]);
    for (const [chargerId, held] of judged) {
      if (this.held.get(chargerId) !== held) continue; // replaced in this process meanwhile
      const now = current.get(chargerId);
      if (now !== undefined && now !== held.connectionId) {
        this.held.delete(chargerId);
        void held.client.close({ code: 1000, reason: 'Replaced by a newer connection', force: true });
      }
    }
  }

  async close(): Promise<void> {
    if (this.poller) clearInterval(this.poller);
    this.poller = undefined;
    await Promise.all([...this.held.values()].map((h) => h.queue));
    await Promise.all([...this.closing]);
    await releaseInstance(this.deps, this.instanceId).catch(() => {});
  }
}
