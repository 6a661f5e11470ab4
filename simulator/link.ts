// The protocol-free half of a simulated charge point: its WebSocket to the central system (connect, a network
// loss, reconnecting with backoff, closing), its calls (a transaction message queued while offline and replayed in
// order on reconnect), BootNotification through Pending/Rejected, and the heartbeat. What a charger does with the
// link (meter, transactions, answers) is charge-point.ts's; the messages' shapes per version are v16.ts / v201.ts.
import { EventEmitter } from 'node:events';
import crypto from 'node:crypto';
import type { ProtocolAdapter } from './charge-point.ts';
import { sleep, type BootReason, type ChargePointOptions, type Protocol, type Quirk, type Setting } from './charge-point-types.ts';
import { createRpcClient, rpcError, type CallHandlerArgs, type SimRpcClient } from './rpc.ts';
import { Stats } from './stats.ts';
import { v16 } from './v16.ts';
import { v201 } from './v201.ts';

interface QueuedCall {
  method: string;
  build: () => Record<string, unknown>;
  onResult?: (result: any) => void;
}

const TX_METHODS = new Set(['StartTransaction', 'StopTransaction', 'MeterValues', 'TransactionEvent']);

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export type LinkOptions = Required<Omit<ChargePointOptions, 'password' | 'stats' | 'log' | 'now' | 'quirks' | 'stateDir' | 'frames'>> & {
  password: string | undefined;
  quirks: readonly Quirk[];
};

export abstract class ChargePointLink extends EventEmitter {
  readonly opts: LinkOptions;
  readonly stats: Stats;
  protected readonly log: (line: string) => void;
  private readonly frames: ((line: string) => void) | undefined;
  readonly now: () => Date;
  /** the messages of this charge point's OCPP version */
  readonly adapter: ProtocolAdapter;
  /** 1.6 configuration keys / 2.0.1 component.variable, as GetConfiguration / GetVariables show them */
  readonly settings: Map<string, Setting>;
  client: SimRpcClient | undefined;
  connected = false;
  booted = false;
  bootCount = 0;
  lastBootStatus: string | undefined;
  heartbeatIntervalS = 300;
  /** calls the central system made to us: [method, params] */
  readonly received: Array<{ method: string; params: any }> = [];
  private queue: QueuedCall[] = [];
  private heartbeatTimer: NodeJS.Timeout | undefined;
  protected closing = false;
  protected rebooting: Promise<void> | undefined;
  private reconnecting = false;
  protected abort = new AbortController();
  /** set by interrupt(): the run is being stopped (the CLI got SIGINT/SIGTERM); waits end, scenarios stop */
  interrupted = false;

  constructor(options: ChargePointOptions) {
    super();
    this.opts = {
      // an endpoint copied with the identity already on it (…/ocpp/CP-1) is accepted as well
      url: options.url.replace(/\/+$/, '').replace(new RegExp(`/(${escapeRegExp(options.identity)}|${escapeRegExp(encodeURIComponent(options.identity))})$`), ''),
      identity: options.identity,
      password: options.password,
      protocol: options.protocol,
      vendor: options.vendor ?? 'Alfen BV',
      model: options.model ?? 'NG910-60023',
      serial: options.serial ?? `SIM${crypto.createHash('sha1').update(options.identity).digest('hex').slice(0, 10).toUpperCase()}`,
      firmware: options.firmware ?? 'sim-1.0.0',
      connectors: options.connectors ?? 1,
      quirks: options.quirks ?? [],
      callTimeoutMs: options.callTimeoutMs ?? 30_000,
      heartbeats: options.heartbeats ?? true,
      autoReconnect: options.autoReconnect ?? true,
      rebootDelayMs: options.rebootDelayMs ?? 1000,
      minBootRetryMs: options.minBootRetryMs ?? 1000,
      livePowerW: options.livePowerW ?? 7400,
      liveMeterIntervalMs: options.liveMeterIntervalMs ?? 60_000,
      liveTimeScale: options.liveTimeScale ?? 1,
      initialRegisterWh: options.initialRegisterWh ?? 0,
      stopTransactionData: options.stopTransactionData ?? true,
      insecure: options.insecure ?? false,
      localAddress: options.localAddress ?? '',
    };
    this.stats = options.stats ?? new Stats();
    this.log = options.log ?? (() => {});
    this.frames = options.frames;
    this.now = options.now ?? (() => new Date());
    this.adapter = this.opts.protocol === 'ocpp1.6' ? v16 : v201;
    const meterS = String(Math.max(1, Math.round(this.opts.liveMeterIntervalMs / 1000)));
    this.settings = this.adapter.settings({ connectors: this.opts.connectors, vendor: this.opts.vendor, model: this.opts.model, meterS });
  }

  get protocol(): Protocol {
    return this.opts.protocol;
  }

  get is16(): boolean {
    return this.opts.protocol === 'ocpp1.6';
  }

  has(q: Quirk): boolean {
    return this.opts.quirks.includes(q);
  }

  get queuedCount(): number {
    return this.queue.length;
  }

  /** what the charger does once booted (or resumed): report its connectors, replay its queue */
  protected abstract afterBoot(flush?: { duplicateFirst?: string }): Promise<void>;
  /** the answer to a call of the central system; undefined = not supported */
  protected abstract answer(method: string, params: any): Record<string, unknown> | undefined;

  // ───────────────────────────── connection ─────────────────────────────

  /** open the WebSocket (no boot); rejects with err.code 401 etc. when the upgrade is refused */
  async connect(): Promise<void> {
    this.closing = false;
    const noSub = this.has('no-subprotocol');
    const client = createRpcClient({
      endpoint: this.opts.url,
      identity: this.opts.identity,
      password: this.opts.password,
      protocols: noSub ? [] : [this.opts.protocol],
      // validate what we send and what we are asked against the official schemas, like a careful charger
      strictMode: !noSub,
      callTimeoutMs: this.opts.callTimeoutMs,
      reconnect: false,
      pingIntervalMs: 60_000,
      ...(this.opts.insecure || this.opts.localAddress
        ? { wsOpts: { ...(this.opts.insecure ? { rejectUnauthorized: false } : {}), ...(this.opts.localAddress ? { localAddress: this.opts.localAddress } : {}) } }
        : {}),
    });
    this.attachHandlers(client);
    const frames = this.frames;
    // ocpp-rpc's raw frames, already compact JSON: → sent, ← received
    if (frames) client.on('message', (e: { message: unknown; outbound: boolean }) => frames(`${this.opts.identity} ${e.outbound ? '→' : '←'} ${String(e.message)}`));
    this.client = client;
    client.on('close', (e: { code?: number; reason?: unknown } | undefined) => {
      if (this.client !== client) return;
      this.onDisconnected(e?.code !== undefined ? `code ${e.code}${e.reason ? ` ${String(e.reason)}` : ''}` : undefined);
    });
    try {
      await client.connect();
    } catch (err) {
      this.client = undefined;
      throw err;
    }
    this.connected = true;
    this.stats.connected++;
    this.log(`${this.opts.identity}: connected to ${this.opts.url}/${this.opts.identity} (${client.protocol ?? 'no subprotocol'})`);
    this.emit('connected');
  }

  /** the socket is gone (closed by either side, dropped, or reset); `detail`: the close code, when known */
  protected onDisconnected(detail?: string): void {
    if (this.connected) this.log(`${this.opts.identity}: disconnected${detail ? ` (${detail})` : ''}`);
    if (this.connected) {
      this.connected = false;
      this.stats.connected--;
      if (this.booted) this.stats.booted--;
    }
    this.booted = false;
    this.client = undefined;
    this.stopHeartbeats();
    this.emit('disconnected');
    if (!this.closing && !this.rebooting && this.opts.autoReconnect) void this.reconnectLoop();
  }

  private async reconnectLoop(): Promise<void> {
    if (this.reconnecting) return;
    this.reconnecting = true;
    let delay = 1000;
    let attempts = 0;
    try {
      while (!this.closing && !this.connected) {
        await sleep(delay, this.abort.signal);
        if (this.closing) return;
        try {
          attempts++;
          await this.connect();
          // a reconnect after a network loss: chargers resume (no new BootNotification once one was
          // accepted), report their status and flush their queue
          const resumed = this.bootCount > 0;
          if (resumed) this.resumeBooted();
          else await this.boot('PowerUp');
          this.log(`${this.opts.identity}: reconnected after ${attempts} attempt(s)${resumed ? ' (resumed, no new BootNotification)' : ''}`);
          await this.afterBoot();
        } catch (err) {
          this.log(`${this.opts.identity}: reconnect failed: ${(err as Error).message}`);
          delay = Math.min(delay * 2, 30_000);
        }
      }
    } finally {
      this.reconnecting = false;
    }
  }

  /** connect, boot (waiting through Pending), report every connector, flush the offline queue */
  async start(): Promise<void> {
    await this.connect();
    await this.boot('PowerUp');
    await this.afterBoot();
  }

  /** drop the connection as a network loss would (no close handshake); no automatic reconnect */
  async goOffline(): Promise<void> {
    const client = this.client;
    this.closing = true;
    if (client) {
      await client.close({ force: true }).catch(() => {});
      if (this.client === client) this.onDisconnected();
    }
  }

  /**
   * come back after goOffline(): connect, boot if asked (a power cycle; a network loss needs none), report
   * status, replay the offline queue (optionally sending one message twice, as a charger that missed the ack)
   */
  async goOnline(opts: { boot?: boolean; duplicateFirst?: string } = {}): Promise<void> {
    this.closing = false;
    await this.connect();
    if ((opts.boot ?? true) || this.bootCount === 0) await this.boot('PowerUp');
    else this.resumeBooted();
    await this.afterBoot(opts.duplicateFirst ? { duplicateFirst: opts.duplicateFirst } : {});
  }

  /** a reconnect without a new boot: the earlier Accepted still holds */
  protected resumeBooted(): void {
    if (!this.booted) this.stats.booted++;
    this.booted = true;
    this.startHeartbeats();
  }

  /**
   * the run is being stopped (a signal): a boot retry's or a reconnect's wait ends at once (the boot then throws), the
   * scenarios stop at their next step; the connection stays open until close() (a running transaction is stopped first)
   */
  interrupt(): void {
    if (this.interrupted) return;
    this.interrupted = true;
    this.abort.abort();
    this.emit('interrupted');
  }

  async close(): Promise<void> {
    this.closing = true;
    this.abort.abort();
    this.stopHeartbeats();
    const client = this.client;
    if (client) {
      await client.close({ code: 1000 }).catch(() => {});
      if (this.client === client) this.onDisconnected();
    }
  }

  // ───────────────────────────── calls ─────────────────────────────

  /**
   * Send a call and wait for its answer. Transaction messages are queued while offline (build() runs at send
   * time, so a transaction id learned later is filled in) and resolve to undefined.
   */
  async call(method: string, build: () => Record<string, unknown>, onResult?: (result: any) => void): Promise<any> {
    if (!this.connected || !this.client) {
      if (TX_METHODS.has(method)) {
        this.queue.push({ method, build, ...(onResult ? { onResult } : {}) });
        this.stats.queued++;
        return undefined;
      }
      throw new Error(`${this.opts.identity}: not connected (${method})`);
    }
    return this.send(method, build(), onResult);
  }

  async send(method: string, params: Record<string, unknown>, onResult?: (result: any) => void): Promise<any> {
    const client = this.client;
    if (!client) throw new Error(`${this.opts.identity}: not connected (${method})`);
    this.stats.sent++;
    const t0 = performance.now();
    // the call's timeout is a plain timer that aborts it: ocpp-rpc's own builds an Error (a stack trace) for every
    // call and aborts a timer signal when the answer comes (another two), which was a tenth of a fleet driver's CPU
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), this.opts.callTimeoutMs);
    try {
      const result = await client.call(method, params, { callTimeoutMs: 0, signal: ac.signal });
      this.stats.recordAck(method, performance.now() - t0);
      onResult?.(result);
      return result;
    } catch (caught) {
      const err = ac.signal.aborted ? Object.assign(new Error('Call timeout'), { name: 'TimeoutError' }) : caught;
      this.stats.recordError(`${this.opts.identity} ${method}: ${(err as Error).message}`);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** replay the offline queue in order (new message ids, original timestamps), as chargers do */
  async flushQueue(opts: { duplicateFirst?: string } = {}): Promise<number> {
    let sent = 0;
    let duplicated = false;
    while (this.queue.length > 0 && this.connected) {
      const item = this.queue[0]!;
      const params = item.build();
      if (!this.is16 && item.method === 'TransactionEvent') params.offline = true;
      await this.send(item.method, params, item.onResult);
      if (!duplicated && opts.duplicateFirst === item.method) {
        // a charger that lost the ack resends the same content under a new message id
        duplicated = true;
        await this.send(item.method, params);
      }
      this.queue.shift();
      this.stats.queued--;
      sent++;
    }
    return sent;
  }

  // ───────────────────────────── boot, heartbeat, status ─────────────────────────────

  /** BootNotification until Accepted; Pending/Rejected are retried after the interval the answer gave */
  async boot(reason: BootReason = 'PowerUp'): Promise<string> {
    for (;;) {
      const params = this.adapter.bootRequest(this.opts, reason);
      const res = await this.send('BootNotification', params);
      const status = String(res?.status);
      const interval = Number(res?.interval ?? 0);
      this.lastBootStatus = status;
      this.emit('bootStatus', status);
      if (status === 'Accepted') {
        if (interval > 0) this.setHeartbeatInterval(interval);
        if (!this.booted) this.stats.booted++;
        this.booted = true;
        this.bootCount++;
        this.startHeartbeats();
        this.emit('booted');
        return status;
      }
      const waitMs = Math.max(this.opts.minBootRetryMs, interval * 1000);
      this.log(`${this.opts.identity}: BootNotification ${status}, retrying in ${Math.round(waitMs / 1000)} s`);
      await sleep(waitMs, this.abort.signal);
      if (this.interrupted) throw new Error(`${this.opts.identity}: interrupted while ${status}`);
      if (this.closing || !this.connected) throw new Error(`${this.opts.identity}: closed while ${status}`);
    }
  }

  setHeartbeatInterval(s: number): void {
    this.heartbeatIntervalS = s;
    this.settings.get(this.adapter.heartbeatKey)!.value = String(s);
    if (this.heartbeatTimer) this.startHeartbeats();
  }

  protected startHeartbeats(): void {
    this.stopHeartbeats();
    if (!this.opts.heartbeats || this.heartbeatIntervalS <= 0) return;
    this.heartbeatTimer = setInterval(() => {
      if (this.connected && this.booted) this.heartbeat().catch(() => {});
    }, this.heartbeatIntervalS * 1000);
    this.heartbeatTimer.unref();
  }

  protected stopHeartbeats(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
  }

  async heartbeat(): Promise<any> {
    return this.send('Heartbeat', {});
  }

  private attachHandlers(client: SimRpcClient): void {
    client.handle(async ({ method, params }: CallHandlerArgs) => {
      this.received.push({ method, params });
      this.emit('call', method, params);
      const h = this.answer(method, params);
      if (h === undefined) throw rpcError(this.adapter.notSupported, `${method} is not supported by the simulator`);
      return h;
    });
  }
}
