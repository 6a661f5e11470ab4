// The sockets this process holds, one per charger; the only in-memory state of the gateway (C4.8: the rest is
// in PostgreSQL). It answers each charger's calls in order, and executes operator commands for its chargers.
import crypto from 'node:crypto';
import { createRPCError } from 'ocpp-rpc';
import type { Deps } from '../deps.ts';
import {
  COMMAND_SENT,
  claimCommand,
  type CommandExecutor,
  commandTarget,
  pendingCommandIds,
  recordCommandOutcome,
} from '../domain/chargers/commands.ts';
import { CommandRunner } from './command-runner.ts';
import { currentConnections, markConnected, markDisconnected, releaseInstance } from '../domain/charging/live-state.ts';
import { publishChargerChanges } from '../domain/charging/charger-changes.ts';
import { newSocketCache } from '../domain/charging/handle-event.ts';
import { actionLabel } from './adapters.ts';
import type { RegistrationStatus } from '../domain/charging/connect-batch.ts';
import { CallHandler, type CallSocket, type OcppProtocol } from './call-handler.ts';
import type { CredentialLookup } from './charger-auth.ts';
import { ConnectionNotices } from './connection-notices.ts';
import type { OcppMetrics } from './metrics.ts';
import { RATE_CLOSE_REASON, SocketFlow } from './socket-flow.ts';
import { type IncomingCall, type RpcClient, validateOutbound } from './rpc.ts';
import { throttledLog } from '../lib/throttled-log.ts';

const noop = () => {};
/**
 * D123: an older socket of a charger that connected again is closed with a close frame that says why (it was
 * terminated, 1006 without a reason, and a charger could not tell a replacement from a network fault). Closing stops
 * it taking calls at once; a charger that never answers the close frame is cut by ws after its close timeout.
 */
const REPLACED = 'Replaced by a newer connection';
/** the full sweep for sockets taken over elsewhere runs every 30 polls (60 s): the bus event is the fast path */
const SWEEP_EVERY_TICKS = 30;
/** Chargers judged per statement by a sweep (a fallback that runs over every socket of the process). */
const SWEEP_CHUNK = 1_000;

export interface OcppSession {
  chargerId: string;
  protocol: OcppProtocol;
  /** the operator's registration status when the socket opened; each BootNotification's answer replaces it (D135) */
  registration: RegistrationStatus;
}

interface Held extends CallSocket {
  /** true once this connection's live-state row is written: only then can the row tell it was superseded */
  recorded: boolean;
  /** C4.4: every charger message is answered in the order received */
  queue: Promise<unknown>;
}

export class LiveRegistry implements CommandExecutor {
  readonly instanceId = crypto.randomUUID();
  private readonly held = new Map<string, Held>();
  private poller: NodeJS.Timeout | undefined;
  private polling = false;
  private readonly unsubscribe: Array<() => void> = [];
  private readonly closing = new Set<Promise<unknown>>();
  private readonly calls: CallHandler;
  private readonly commands: CommandRunner;
  private readonly notices: ConnectionNotices;
  private ticks = 0;

  constructor(
    private readonly deps: Deps,
    private readonly metrics: OcppMetrics,
  ) {
    this.calls = new CallHandler(deps, metrics);
    this.commands = new CommandRunner(deps, metrics);
    this.notices = new ConnectionNotices(deps, this.instanceId);
  }

  /** The upgrade's credential lookup in batches, when the connect path is batched. */
  get credentialLookup(): CredentialLookup | undefined {
    const c = this.calls.connect;
    return c ? (identity) => c.credentialsOf(identity) : undefined;
  }

  /** A new authenticated socket. A newer connection replaces an older one (C4.2). */
  attach(client: RpcClient, session: OcppSession): void {
    const { chargerId, protocol } = session;
    const connectionId = crypto.randomUUID();
    const older = this.held.get(chargerId);
    const held: Held = {
      client,
      connectionId,
      recorded: false,
      protocol,
      queue: Promise.resolve(),
      seenWrittenAt: 0,
      cache: newSocketCache(),
      registration: session.registration,
    };
    this.held.set(chargerId, held);
    const row = { chargerId, protocol, connectionId, instanceId: this.instanceId };
    held.queue = (this.calls.connect ? this.calls.connect.connected({ ...row, at: this.deps.clock() }) : markConnected(this.deps, chargerId, row))
      .then(() => {
        held.recorded = true;
        publishChargerChanges(this.deps, [chargerId]); // C7.1: online (once the row is committed)
        this.notices.announce(chargerId); // C4.2: another process holding an older socket closes it
      })
      .catch((err) => this.deps.logger.error({ err, chargerId }, 'ocpp: could not record the connection'));
    const who = { identity: client.identity, chargerId };
    // item 9: one line per connect, replaced connection and disconnect
    this.deps.logger.info(
      { event: 'ocpp.connect', ...who, protocol, remoteAddress: client.handshake.remoteAddress, connectionId },
      'ocpp: charger connected',
    );
    if (older) {
      this.deps.logger.info({ event: 'ocpp.replace', ...who, connectionId: older.connectionId, by: connectionId }, 'ocpp: connection replaced');
      // C4.10: every promise at the edge is handled (close awaits the socket's 'close', which an 'error' can reject)
      older.client.close({ code: 1000, reason: REPLACED }).catch(() => {});
    }
    this.metrics.connected.inc({ protocol });

    // C4.11: the raw text of each inbound call is kept until it is answered (for the quarantine)
    this.calls.watch(client);
    // C4.12: at most OCPP_MAX_PENDING_CALLS calls waiting per socket; more are answered "busy", not processed.
    // D157: while that many wait the socket is not read, and a socket that goes on sending calls past that bound
    // (or frames that are not OCPP) beyond a rate is closed
    const flow = new SocketFlow(client.handshake.request.socket, this.deps.config.OCPP_MESSAGES_PER_SECOND, this.deps.config.OCPP_MESSAGE_BURST);
    const overrun = () => this.overrun(flow, client, chargerId, protocol);
    const max = this.deps.config.OCPP_MAX_PENDING_CALLS;
    let pending = 0;
    // not async: the returned promise is the call's only one (ocpp-rpc catches a throw of the handler as it does a
    // rejection); with many calls waiting for their batch, each extra frame kept per call is garbage collection work
    const wildcard = (call: IncomingCall) => {
      const received = performance.now();
      if (pending >= max) {
        this.metrics.messages.inc({ protocol, action: actionLabel(protocol, call.method), outcome: 'busy' });
        overrun();
        throw createRPCError('GenericError', 'busy');
      }
      flow.pending(++pending, max);
      const run = held.queue.then(() => this.calls.answer(held, chargerId, call));
      held.queue = run.then(noop, noop); // the next call waits for this one, without keeping its answer alive
      return run.finally(() => {
        flow.pending(--pending, max);
        const action = actionLabel(protocol, call.method);
        this.metrics.inboundCall.observe({ protocol, action }, (performance.now() - received) / 1000);
      });
    };
    // ocpp-rpc types handle() as a union of handler maps; a wildcard handler receives IncomingCall
    client.handle(wildcard as unknown as Parameters<RpcClient['handle']>[0]);
    client.on('badMessage', () => {
      this.metrics.messages.inc({ protocol, action: 'unknown', outcome: 'bad_frame' });
      overrun();
    });
    client.once('close', (e: { code?: number; reason?: unknown }) => {
      this.deps.logger.info({ event: 'ocpp.disconnect', ...who, connectionId, code: e?.code, reason: String(e?.reason ?? '') }, 'ocpp: charger disconnected');
      this.metrics.connected.dec({ protocol });
      // its close never clears the newer connection's state: both the map and the row are keyed by connection
      if (this.held.get(chargerId)?.connectionId === connectionId) this.held.delete(chargerId);
      const at = this.deps.clock();
      const connect = this.calls.connect;
      const done = held.queue
        .then(() => (connect ? connect.disconnected({ chargerId, connectionId, at }) : markDisconnected(this.deps, chargerId, connectionId, at)))
        .then(() => publishChargerChanges(this.deps, [chargerId])) // C7.1: offline
        .catch(() => {});
      this.closing.add(done);
      void done.finally(() => this.closing.delete(done));
    });
    this.ensurePoller();
  }

  /**
   * D157: a message the socket should not have sent: a call past OCPP_MAX_PENDING_CALLS (answered busy) or a frame
   * that is not OCPP. Each takes a token of the socket's flow (socket-flow.ts); past the rate the socket is closed
   * with 1008 (logged, counted). A charger that waits for each answer, as OCPP-J asks, never takes one, however fast
   * it replays a backlog: its rate is the gateway's own answering.
   */
  private overrun(flow: SocketFlow, client: RpcClient, chargerId: string, protocol: OcppProtocol): void {
    if (flow.take()) return; // (true once stopped: it closes once)
    this.metrics.rateClosed.inc({ protocol });
    const { OCPP_MESSAGES_PER_SECOND: perSecond, OCPP_MESSAGE_BURST: burst } = this.deps.config;
    this.deps.logger.warn(
      { event: 'ocpp.rate_exceeded', identity: client.identity, chargerId, perSecond, burst },
      'ocpp: closed a charger sending calls past its bound faster than its rate',
    );
    flow.stop(() => client.close({ code: 1008, reason: RATE_CLOSE_REASON }));
  }

  // ---- CommandExecutor (C6.6) ----

  validate(protocol: string, action: string, payload: unknown): string | null {
    return validateOutbound(protocol, `urn:${action}.req`, payload);
  }

  async execute(commandId: string): Promise<void> {
    const target = await commandTarget(this.deps, commandId);
    if (!target) return;
    const held = this.held.get(target.charger_id);
    if (!held) {
      // not (or no longer) held here: nothing was sent
      if (await claimCommand(this.deps, commandId, 0, 0)) await recordCommandOutcome(this.deps, commandId, { status: 'failed', error: 'charger_offline' });
      return;
    }
    // D161: one command at a time per socket, each sent only while its requester still waits (command-runner.ts)
    return this.commands.run(held, commandId);
  }

  /**
   * Cross-process work, while this process holds sockets: a command for one of our chargers written by another
   * process arrives as a bus event (LISTEN/NOTIFY) and is executed at once, and so does the news that another
   * process recorded a newer connection of one of our chargers (C4.2: the older socket here is closed). As a
   * fallback for an event lost (the listening connection was down), pending commands are read from their table
   * every 2 s, and every SWEEP_EVERY_TICKS × 2 s (and after the bus reconnected) all our sockets are checked against
   * their live-state rows.
   */
  private ensurePoller(): void {
    if (this.poller) return;
    const bus = this.deps.bus;
    if (bus) {
      this.unsubscribe.push(
        bus.subscribe(COMMAND_SENT, (p) => {
          if (p.instance !== this.instanceId || typeof p.id !== 'string') return;
          this.execute(p.id).catch((err) => this.deps.logger.warn({ err }, 'ocpp: command failed'));
        }),
        bus.onResync(() => {
          void this.pollCommands();
          void this.closeSuperseded().catch(() => {});
        }),
        this.notices.subscribe((ids) => {
          this.closeSuperseded(ids).catch((err) => this.deps.logger.warn({ err }, 'ocpp: superseded-connection check failed'));
        }),
      );
    }
    this.poller = setInterval(() => {
      if (this.polling || this.held.size === 0) return;
      this.polling = true;
      const sweep = ++this.ticks % SWEEP_EVERY_TICKS === 0;
      this.pollCommands()
        .then(() => (sweep ? this.closeSuperseded() : undefined))
        .catch((err) => throttledLog(this.deps.logger).event('warn', 'ocpp.sweep_failed', { err }, 'ocpp: superseded-connection sweep failed')) // D232
        .finally(() => {
          this.polling = false;
        });
    }, 2_000);
    this.poller.unref();
  }

  private async pollCommands(): Promise<void> {
    try {
      const ids = await pendingCommandIds(this.deps, this.instanceId);
      await Promise.all(ids.map((id) => this.execute(id)));
    } catch (err) {
      // D222: once a minute per process with a count of the rest (it fails every second while the database is away)
      throttledLog(this.deps.logger).event('warn', 'ocpp.command_poll_failed', { err }, 'ocpp: command poll failed');
    }
  }

  /** Closes those of our sockets (all, or the given chargers') whose live-state row names a newer connection. */
  private async closeSuperseded(chargerIds?: string[]): Promise<void> {
    const ids = chargerIds ? chargerIds.filter((id) => this.held.has(id)) : [...this.held.keys()];
    // a sweep over every socket goes SWEEP_CHUNK chargers at a time: one statement naming a process's 16,000
    // chargers, and judging its answer, held the event loop for half a second while answers waited
    for (let i = 0; i < ids.length; i += SWEEP_CHUNK) await this.closeSupersededAmong(ids.slice(i, i + SWEEP_CHUNK));
  }

  private async closeSupersededAmong(ids: string[]): Promise<void> {
    // Only connections whose own row was written before the read can be judged by it: a socket still in its
    // markConnected (a ramp-up or a storm) would otherwise be taken for the stale one and dropped mid-boot.
    const judged = new Map(ids.flatMap((id) => {
      const h = this.held.get(id);
      return h?.recorded ? [[id, h] as const] : [];
    }));
    if (judged.size === 0) return;
    const current = await currentConnections(this.deps, [...judged.keys()]);
    for (const [chargerId, held] of judged) {
      if (this.held.get(chargerId) !== held) continue; // replaced in this process meanwhile
      const now = current.get(chargerId);
      if (now !== undefined && now !== held.connectionId) {
        this.deps.logger.info(
          { event: 'ocpp.replace', identity: held.client.identity, chargerId, connectionId: held.connectionId, by: 'another process' },
          'ocpp: connection replaced',
        );
        this.held.delete(chargerId);
        held.client.close({ code: 1000, reason: REPLACED }).catch(() => {});
      }
    }
  }

  /** The sockets this process holds (the drain at shutdown). */
  clients(): RpcClient[] {
    return [...this.held.values()].map((h) => h.client);
  }

  /** Writes the last_seen_at notes of this process's sockets now (they are written every 250 ms anyway). */
  flushSeen(): Promise<void> {
    return this.calls.seen.flush();
  }

  async close(): Promise<void> {
    if (this.poller) clearInterval(this.poller);
    this.poller = undefined;
    for (const u of this.unsubscribe.splice(0)) u();
    this.notices.close();
    const heldIds = [...this.held.keys()];
    await Promise.all([...this.held.values()].map((h) => h.queue));
    await this.flushSeen();
    await Promise.all([...this.closing]);
    await releaseInstance(this.deps, this.instanceId).then(() => publishChargerChanges(this.deps, heldIds), () => {});
  }
}
