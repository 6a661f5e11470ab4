// One simulated charge point: an ocpp-rpc client that behaves like a real charger towards ANY OCPP central
// system (OCPP 1.6J or 2.0.1). It boots (honouring Pending/Rejected and the interval), heartbeats, reports
// status, runs transactions with register readings, queues transaction messages while offline and replays
// them on reconnect, and answers the central system's calls (Reset, TriggerMessage, Change/GetConfiguration,
// Set/GetVariables, RemoteStart/Stop, RequestStart/Stop, ...).
//
// Transactions are driven two ways:
//  - scripted, with explicit (simulated) timestamps: beginTx / txMeter / endTx (the scenarios use these);
//  - live, in real time: startLiveSession / stopLiveSession (remote starts, the CLI's --realtime).
// Energy is integer Wh throughout; the register per connector only ever moves forward unless a quirk resets it.
import { EventEmitter } from 'node:events';
import crypto from 'node:crypto';
import { createRpcClient, rpcError, type CallHandlerArgs, type SimRpcClient } from './rpc.ts';
import { Stats } from './stats.ts';

export type Protocol = 'ocpp1.6' | 'ocpp2.0.1';
export const PROTOCOLS: readonly Protocol[] = ['ocpp1.6', 'ocpp2.0.1'];

/** Deviations real chargers show (issue 5 item 2); the first five keep the energy totals intact. */
export type Quirk =
  | 'kwh' // register values sent in kWh (correctly labelled)
  | 'phases' // only per-phase registers L1..L3, no phase-less total
  | 'register-reset' // the register restarts at 0 for every transaction
  | 'no-txid' // periodic readings without transactionId (1.6) / as MeterValues instead of TransactionEvent (2.0.1)
  | 'no-subprotocol' // the WebSocket upgrade offers no subprotocol (served as 1.6 by most systems)
  | 'kwh-as-wh' // kWh figures labelled Wh (a broken firmware; totals deliberately wrong)
  | 'wh-as-kwh'; // Wh figures labelled kWh (a broken firmware; totals deliberately wrong)
export const QUIRKS: readonly Quirk[] = ['kwh', 'phases', 'register-reset', 'no-txid', 'no-subprotocol', 'kwh-as-wh', 'wh-as-kwh'];
/** the quirks a central system must absorb without changing the energy (the default `quirks` set) */
export const TOTAL_PRESERVING_QUIRKS: readonly Quirk[] = ['kwh', 'phases', 'register-reset', 'no-txid', 'no-subprotocol'];

export interface ChargePointOptions {
  /** central system endpoint WITHOUT the identity, e.g. ws://localhost:8080/ocpp (the identity is appended) */
  url: string;
  identity: string;
  password?: string | undefined;
  protocol: Protocol;
  vendor?: string;
  model?: string;
  serial?: string;
  firmware?: string;
  /** connectors (1.6) / EVSEs with one connector each (2.0.1); default 1 */
  connectors?: number;
  quirks?: readonly Quirk[];
  callTimeoutMs?: number;
  /** send Heartbeat at the interval the central system gave (default true) */
  heartbeats?: boolean;
  /** reconnect (and replay the offline queue) after an unexpected disconnect; default true */
  autoReconnect?: boolean;
  /** wait between a Reset and the new connection + boot; default 1000 ms */
  rebootDelayMs?: number;
  /** lower bound for the Pending/Rejected retry wait, so a 0 interval does not spin; default 1000 ms */
  minBootRetryMs?: number;
  /** live sessions (remote start): power and sample interval */
  livePowerW?: number;
  liveMeterIntervalMs?: number;
  /** simulated seconds per real second for live sessions (energy and timestamps advance this fast); default 1 */
  liveTimeScale?: number;
  /** register value the charger's meter starts from (Wh); default 0 */
  initialRegisterWh?: number;
  /** wss:// without certificate verification (a test system with a self-signed certificate) */
  insecure?: boolean;
  /** source address of the connection (a fleet spread over 127.0.0.0/8 when one address runs out of ports) */
  localAddress?: string;
  /** 1.6: add the end reading as transactionData to StopTransaction, as most chargers do; default true */
  stopTransactionData?: boolean;
  stats?: Stats;
  log?: (line: string) => void;
  now?: () => Date;
}

export interface SessionRecord {
  connectorId: number;
  /** the id the central system knows the transaction by (1.6: assigned by it; 2.0.1: ours) */
  transactionId: string | null;
  startedAt: string;
  stoppedAt: string | null;
  meterStartWh: number;
  meterStopWh: number | null;
  /** energy physically delivered (independent of any labelling quirk) */
  energyWh: number;
  stopReason: string | null;
  offline: boolean;
}

export interface Tx {
  connectorId: number;
  idTag: string;
  /** 2.0.1 transaction id (ours); 1.6: filled from the StartTransaction answer */
  localId: string;
  transactionId: string | number | null;
  seqNo: number;
  meterStartWh: number;
  lastWh: number;
  record: SessionRecord;
  quirks: readonly Quirk[];
}

interface LiveSession {
  tx: Tx;
  timer: NodeJS.Timeout;
  lastTick: number;
  fractionWh: number;
  powerW: number;
  maxEnergyWh: number | undefined;
  done: Promise<SessionRecord>;
  resolve: (r: SessionRecord) => void;
  stopping: boolean;
}

interface QueuedCall {
  method: string;
  build: () => Record<string, unknown>;
  onResult?: (result: any) => void;
}

const TX_METHODS = new Set(['StartTransaction', 'StopTransaction', 'MeterValues', 'TransactionEvent']);

/**
 * UTC timestamp; whole seconds are sent without milliseconds (as most chargers do), live readings keep theirs
 * so that two readings within one second never look like an instantaneous jump
 */
export function iso(d: Date): string {
  return d.toISOString().replace(/\.000Z$/, 'Z');
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** integer Wh as a kWh decimal string with 3 decimals, without floating point */
export function whToKwhString(wh: number): string {
  const sign = wh < 0 ? '-' : '';
  const a = Math.abs(wh);
  return `${sign}${Math.floor(a / 1000)}.${String(a % 1000).padStart(3, '0')}`;
}

/** three monotone per-phase registers that sum exactly to wh (Hermite: Σ floor((n+i)/3) = n) */
export function splitPhases(wh: number): [number, number, number] {
  return [Math.floor(wh / 3), Math.floor((wh + 1) / 3), Math.floor((wh + 2) / 3)];
}

/** Calls both protocols answer the same way (their responses have the same shape in 1.6 and 2.0.1). */
const COMMON_ANSWERS: Record<string, Record<string, unknown>> = {
  ChangeAvailability: { status: 'Accepted' },
  UnlockConnector: { status: 'Unlocked' },
  ClearCache: { status: 'Accepted' },
  DataTransfer: { status: 'UnknownVendorId' },
};

/** OCPP 1.6 security whitepaper: AuthorizationKey arrives hex-encoded; a value that is not hex is taken as is. */
function hexDecodedKey(value: string): string | undefined {
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(value)) return value;
  const text = Buffer.from(value, 'hex').toString('utf8');
  return /^[\x21-\x7e]+$/.test(text) ? text : undefined;
}

export class ChargePoint extends EventEmitter {
  readonly opts: Required<Omit<ChargePointOptions, 'password' | 'stats' | 'log' | 'now' | 'quirks'>> & {
    password: string | undefined;
    quirks: readonly Quirk[];
  };
  readonly stats: Stats;
  private readonly log: (line: string) => void;
  readonly now: () => Date;
  client: SimRpcClient | undefined;
  connected = false;
  booted = false;
  bootCount = 0;
  lastBootStatus: string | undefined;
  heartbeatIntervalS = 300;
  /** completed (and provisionally stopped) sessions, in order */
  readonly sessions: SessionRecord[] = [];
  /** calls the central system made to us: [method, params] */
  readonly received: Array<{ method: string; params: any }> = [];
  private registers = new Map<number, number>();
  private queue: QueuedCall[] = [];
  private live = new Map<number, LiveSession>();
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private closing = false;
  private rebooting: Promise<void> | undefined;
  private reconnecting = false;
  private abort = new AbortController();
  private config16: Map<string, { value: string; readonly: boolean }>;
  private variables201: Map<string, { value: string; readonly: boolean }>;

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
    this.now = options.now ?? (() => new Date());
    for (let c = 1; c <= this.opts.connectors; c++) this.registers.set(c, this.opts.initialRegisterWh);
    const meterS = String(Math.max(1, Math.round(this.opts.liveMeterIntervalMs / 1000)));
    this.config16 = new Map([
      ['HeartbeatInterval', { value: '300', readonly: false }],
      ['MeterValueSampleInterval', { value: meterS, readonly: false }],
      ['ClockAlignedDataInterval', { value: '0', readonly: false }],
      ['ConnectionTimeOut', { value: '60', readonly: false }],
      ['MeterValuesSampledData', { value: 'Energy.Active.Import.Register,Power.Active.Import', readonly: false }],
      ['StopTxnSampledData', { value: 'Energy.Active.Import.Register', readonly: false }],
      ['AuthorizeRemoteTxRequests', { value: 'false', readonly: false }],
      ['LocalAuthorizeOffline', { value: 'true', readonly: false }],
      ['LocalPreAuthorize', { value: 'false', readonly: false }],
      ['NumberOfConnectors', { value: String(this.opts.connectors), readonly: true }],
      ['SupportedFeatureProfiles', { value: 'Core,RemoteTrigger', readonly: true }],
      ['ChargePointVendor', { value: this.opts.vendor, readonly: true }],
      ['ChargePointModel', { value: this.opts.model, readonly: true }],
    ]);
    this.variables201 = new Map([
      ['OCPPCommCtrlr.HeartbeatInterval', { value: '300', readonly: false }],
      ['OCPPCommCtrlr.OfflineThreshold', { value: '60', readonly: false }],
      ['SampledDataCtrlr.TxUpdatedInterval', { value: meterS, readonly: false }],
      ['SampledDataCtrlr.TxUpdatedMeasurands', { value: 'Energy.Active.Import.Register,Power.Active.Import', readonly: false }],
      ['AlignedDataCtrlr.Interval', { value: '0', readonly: false }],
      ['AuthCtrlr.AuthorizeRemoteStart', { value: 'false', readonly: false }],
      ['TxCtrlr.EVConnectionTimeOut', { value: '60', readonly: false }],
      ['ChargingStation.Model', { value: this.opts.model, readonly: true }],
      ['ChargingStation.VendorName', { value: this.opts.vendor, readonly: true }],
      ['EVSE.Count', { value: String(this.opts.connectors), readonly: true }],
    ]);
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

  register(connectorId: number): number {
    return this.registers.get(connectorId) ?? 0;
  }

  setRegister(connectorId: number, wh: number): void {
    this.registers.set(connectorId, wh);
  }

  /** total energy of the sessions this charge point completed */
  deliveredWh(): number {
    return this.sessions.reduce((s, r) => s + r.energyWh, 0);
  }

  liveTx(connectorId: number): Tx | undefined {
    return this.live.get(connectorId)?.tx;
  }

  get queuedCount(): number {
    return this.queue.length;
  }

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
    this.client = client;
    client.on('close', () => {
      if (this.client !== client) return;
      this.onDisconnected();
    });
    try {
      await client.connect();
    } catch (err) {
      this.client = undefined;
      throw err;
    }
    this.connected = true;
    this.stats.connected++;
    this.emit('connected');
  }

  private onDisconnected(): void {
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
    try {
      while (!this.closing && !this.connected) {
        await sleep(delay, this.abort.signal);
        if (this.closing) return;
        try {
          await this.connect();
          // a reconnect after a network loss: chargers resume (no new BootNotification once one was
          // accepted), report their status and flush their queue
          if (this.bootCount === 0) await this.boot('PowerUp');
          else this.resumeBooted();
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

  private async afterBoot(flush: { duplicateFirst?: string } = {}): Promise<void> {
    for (let c = 1; c <= this.opts.connectors; c++) {
      await this.statusNotification(c, this.live.has(c) ? 'Charging' : 'Available');
    }
    await this.flushQueue(flush);
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
  private resumeBooted(): void {
    if (!this.booted) this.stats.booted++;
    this.booted = true;
    this.startHeartbeats();
  }

  async close(): Promise<void> {
    this.closing = true;
    this.abort.abort();
    for (const l of this.live.values()) clearInterval(l.timer);
    this.live.clear();
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

  private async send(method: string, params: Record<string, unknown>, onResult?: (result: any) => void): Promise<any> {
    const client = this.client;
    if (!client) throw new Error(`${this.opts.identity}: not connected (${method})`);
    this.stats.sent++;
    const t0 = performance.now();
    try {
      const result = await client.call(method, params);
      this.stats.recordAck(method, performance.now() - t0);
      onResult?.(result);
      return result;
    } catch (err) {
      this.stats.recordError(`${this.opts.identity} ${method}: ${(err as Error).message}`);
      throw err;
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
  async boot(reason: 'PowerUp' | 'RemoteReset' | 'Triggered' | 'ApplicationReset' = 'PowerUp'): Promise<string> {
    for (;;) {
      const params = this.is16
        ? {
            chargePointVendor: this.opts.vendor.slice(0, 20),
            chargePointModel: this.opts.model.slice(0, 20),
            chargePointSerialNumber: this.opts.serial.slice(0, 25),
            firmwareVersion: this.opts.firmware.slice(0, 50),
          }
        : {
            reason,
            chargingStation: {
              vendorName: this.opts.vendor.slice(0, 50),
              model: this.opts.model.slice(0, 20),
              serialNumber: this.opts.serial.slice(0, 25),
              firmwareVersion: this.opts.firmware.slice(0, 50),
            },
          };
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
      if (this.closing || !this.connected) throw new Error(`${this.opts.identity}: closed while ${status}`);
    }
  }

  private setHeartbeatInterval(s: number): void {
    this.heartbeatIntervalS = s;
    this.config16.get('HeartbeatInterval')!.value = String(s);
    this.variables201.get('OCPPCommCtrlr.HeartbeatInterval')!.value = String(s);
    if (this.heartbeatTimer) this.startHeartbeats();
  }

  private startHeartbeats(): void {
    this.stopHeartbeats();
    if (!this.opts.heartbeats || this.heartbeatIntervalS <= 0) return;
    this.heartbeatTimer = setInterval(() => {
      if (this.connected && this.booted) this.heartbeat().catch(() => {});
    }, this.heartbeatIntervalS * 1000);
    this.heartbeatTimer.unref();
  }

  private stopHeartbeats(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = undefined;
  }

  async heartbeat(): Promise<any> {
    return this.send('Heartbeat', {});
  }

  /** 1.6 status names; 2.0.1 maps them onto Available/Occupied/Unavailable/Faulted */
  async statusNotification(connectorId: number, status: string, at: Date = this.now()): Promise<void> {
    if (!this.connected) return; // chargers report the current state after reconnecting, not the backlog
    if (this.is16) {
      await this.send('StatusNotification', { connectorId, errorCode: 'NoError', status, timestamp: iso(at) });
    } else {
      const map: Record<string, string> = {
        Available: 'Available',
        Preparing: 'Occupied',
        Charging: 'Occupied',
        SuspendedEV: 'Occupied',
        SuspendedEVSE: 'Occupied',
        Finishing: 'Occupied',
        Unavailable: 'Unavailable',
        Faulted: 'Faulted',
        Reserved: 'Reserved',
      };
      await this.send('StatusNotification', {
        timestamp: iso(at),
        connectorStatus: map[status] ?? 'Available',
        evseId: connectorId,
        connectorId: 1,
      });
    }
  }

  async authorize(idTag: string): Promise<string | undefined> {
    if (!this.connected) return undefined; // offline: local authorisation
    const res = this.is16
      ? await this.send('Authorize', { idTag })
      : await this.send('Authorize', { idToken: { idToken: idTag, type: 'ISO14443' } });
    return this.is16 ? res?.idTagInfo?.status : res?.idTokenInfo?.status;
  }

  // ───────────────────────────── meter values ─────────────────────────────

  private energySampled(wh: number, context: string, quirks: readonly Quirk[]): Array<Record<string, unknown>> {
    const kwhAsWh = quirks.includes('kwh-as-wh');
    const whAsKwh = quirks.includes('wh-as-kwh');
    const kwh = quirks.includes('kwh') || kwhAsWh;
    const label = whAsKwh ? 'kWh' : kwhAsWh ? 'Wh' : kwh ? 'kWh' : 'Wh';
    const values: Array<{ v: number; phase?: string }> = quirks.includes('phases')
      ? splitPhases(wh).map((v, i) => ({ v, phase: `L${i + 1}` }))
      : [{ v: wh }];
    return values.map(({ v, phase }) => {
      const measurand = 'Energy.Active.Import.Register';
      if (this.is16) {
        return {
          value: kwh ? whToKwhString(v) : String(v),
          context,
          measurand,
          unit: label,
          location: 'Outlet',
          ...(phase ? { phase } : {}),
        };
      }
      return {
        value: kwh ? Number(whToKwhString(v)) : v,
        context,
        measurand,
        location: 'Outlet',
        unitOfMeasure: { unit: label },
        ...(phase ? { phase } : {}),
      };
    });
  }

  private meterValue(wh: number, at: Date, context: string, quirks: readonly Quirk[], powerW?: number): Record<string, unknown> {
    const sampled = this.energySampled(wh, context, quirks);
    if (powerW !== undefined && context === 'Sample.Periodic') {
      sampled.push(
        this.is16
          ? { value: String(powerW), context, measurand: 'Power.Active.Import', unit: 'W', location: 'Outlet' }
          : { value: powerW, context, measurand: 'Power.Active.Import', location: 'Outlet', unitOfMeasure: { unit: 'W' } },
      );
    }
    return { timestamp: iso(at), sampledValue: sampled };
  }

  /** a station-level or connector reading outside any transaction */
  async meterValuesIdle(connectorId: number, at: Date = this.now()): Promise<void> {
    const wh = this.register(connectorId);
    const mv = this.meterValue(wh, at, 'Trigger', this.opts.quirks);
    await this.call('MeterValues', () => (this.is16 ? { connectorId, meterValue: [mv] } : { evseId: connectorId, meterValue: [mv] }));
  }

  // ───────────────────────────── transactions (scripted) ─────────────────────────────

  /** start a transaction at `at` with the connector's current register (or 0 with register-reset) */
  async beginTx(opts: {
    connectorId: number;
    idTag: string;
    at: Date;
    trigger?: 'Authorized' | 'RemoteStart';
    remoteStartId?: number;
    quirks?: readonly Quirk[];
  }): Promise<Tx> {
    const quirks = opts.quirks ?? this.opts.quirks;
    if (quirks.includes('register-reset')) this.setRegister(opts.connectorId, 0);
    const meterStartWh = this.register(opts.connectorId);
    const offline = !this.connected;
    const tx: Tx = {
      connectorId: opts.connectorId,
      idTag: opts.idTag,
      localId: crypto.randomUUID(),
      transactionId: null,
      seqNo: 0,
      meterStartWh,
      lastWh: meterStartWh,
      quirks,
      record: {
        connectorId: opts.connectorId,
        transactionId: null,
        startedAt: iso(opts.at),
        stoppedAt: null,
        meterStartWh,
        meterStopWh: null,
        energyWh: 0,
        stopReason: null,
        offline,
      },
    };
    const at = iso(opts.at);
    if (this.is16) {
      await this.call(
        'StartTransaction',
        () => ({ connectorId: opts.connectorId, idTag: opts.idTag, meterStart: meterStartWh, timestamp: at }),
        (res) => {
          tx.transactionId = Number(res?.transactionId);
          tx.record.transactionId = String(res?.transactionId);
        },
      );
    } else {
      tx.transactionId = tx.localId;
      tx.record.transactionId = tx.localId;
      const seqNo = tx.seqNo++;
      await this.call('TransactionEvent', () => ({
        eventType: 'Started',
        timestamp: at,
        triggerReason: opts.trigger ?? 'Authorized',
        seqNo,
        transactionInfo: {
          transactionId: tx.localId,
          chargingState: 'Charging',
          ...(opts.remoteStartId !== undefined ? { remoteStartId: opts.remoteStartId } : {}),
        },
        evse: { id: opts.connectorId, connectorId: 1 },
        idToken: { idToken: opts.idTag, type: 'ISO14443' },
        meterValue: [this.meterValue(meterStartWh, opts.at, 'Transaction.Begin', quirks)],
      }));
    }
    return tx;
  }

  /** a periodic register reading of a running transaction */
  async txMeter(tx: Tx, wh: number, at: Date, powerW?: number): Promise<void> {
    tx.lastWh = wh;
    this.setRegister(tx.connectorId, wh);
    const mv = this.meterValue(wh, at, 'Sample.Periodic', tx.quirks, powerW);
    const noTxId = tx.quirks.includes('no-txid');
    if (this.is16) {
      await this.call('MeterValues', () => ({
        connectorId: tx.connectorId,
        ...(noTxId || tx.transactionId === null ? {} : { transactionId: tx.transactionId }),
        meterValue: [mv],
      }));
    } else if (noTxId) {
      await this.call('MeterValues', () => ({ evseId: tx.connectorId, meterValue: [mv] }));
    } else {
      const seqNo = tx.seqNo++;
      await this.call('TransactionEvent', () => ({
        eventType: 'Updated',
        timestamp: iso(at),
        triggerReason: 'MeterValuePeriodic',
        seqNo,
        transactionInfo: { transactionId: tx.localId, chargingState: 'Charging' },
        evse: { id: tx.connectorId, connectorId: 1 },
        meterValue: [mv],
      }));
    }
  }

  /** stop the transaction at register `wh` */
  async endTx(tx: Tx, wh: number, at: Date, reason: 'Local' | 'Remote' | 'HardReset' | 'SoftReset' | 'EVDisconnected' = 'Local'): Promise<SessionRecord> {
    tx.lastWh = wh;
    this.setRegister(tx.connectorId, wh);
    const stamp = iso(at);
    if (this.is16) {
      await this.call('StopTransaction', () => ({
        // an offline-started transaction whose StartTransaction was never answered: -1, as chargers do
        transactionId: tx.transactionId ?? -1,
        idTag: tx.idTag,
        meterStop: wh,
        timestamp: stamp,
        reason,
        ...(this.opts.stopTransactionData ? { transactionData: [this.meterValue(wh, at, 'Transaction.End', tx.quirks)] } : {}),
      }));
    } else {
      const map201: Record<string, [string, string]> = {
        Local: ['StopAuthorized', 'Local'],
        Remote: ['RemoteStop', 'Remote'],
        HardReset: ['ResetCommand', 'ImmediateReset'],
        SoftReset: ['ResetCommand', 'ImmediateReset'],
        EVDisconnected: ['EVCommunicationLost', 'EVDisconnected'],
      };
      const [triggerReason, stoppedReason] = map201[reason]!;
      const seqNo = tx.seqNo++;
      await this.call('TransactionEvent', () => ({
        eventType: 'Ended',
        timestamp: stamp,
        triggerReason,
        seqNo,
        transactionInfo: { transactionId: tx.localId, chargingState: 'Idle', stoppedReason },
        evse: { id: tx.connectorId, connectorId: 1 },
        idToken: { idToken: tx.idTag, type: 'ISO14443' },
        meterValue: [this.meterValue(wh, at, 'Transaction.End', tx.quirks)],
      }));
    }
    tx.record.stoppedAt = stamp;
    tx.record.meterStopWh = wh;
    tx.record.energyWh = wh - tx.meterStartWh;
    tx.record.stopReason = reason;
    if (tx.transactionId !== null) tx.record.transactionId = String(tx.transactionId);
    this.sessions.push(tx.record);
    this.emit('sessionEnded', tx.record);
    return tx.record;
  }

  // ───────────────────────────── transactions (live, real time) ─────────────────────────────

  /** start charging now and report the register every meter interval until stopped (or maxEnergyWh reached) */
  async startLiveSession(opts: {
    connectorId?: number;
    idTag?: string;
    powerW?: number;
    maxEnergyWh?: number;
    trigger?: 'Authorized' | 'RemoteStart';
    remoteStartId?: number;
  } = {}): Promise<{ tx: Tx; done: Promise<SessionRecord> }> {
    const connectorId = opts.connectorId ?? 1;
    if (this.live.has(connectorId)) throw new Error(`connector ${connectorId} is already charging`);
    const idTag = opts.idTag ?? 'SIMTAG01';
    await this.statusNotification(connectorId, 'Preparing');
    if (opts.trigger !== 'RemoteStart') await this.authorize(idTag);
    const tx = await this.beginTx({
      connectorId,
      idTag,
      at: this.now(),
      trigger: opts.trigger ?? 'Authorized',
      ...(opts.remoteStartId !== undefined ? { remoteStartId: opts.remoteStartId } : {}),
    });
    await this.statusNotification(connectorId, 'Charging');
    let resolve!: (r: SessionRecord) => void;
    const done = new Promise<SessionRecord>((r) => (resolve = r));
    const intervalMs = this.liveMeterIntervalMs();
    const session: LiveSession = {
      tx,
      lastTick: performance.now(),
      fractionWh: 0,
      powerW: opts.powerW ?? this.opts.livePowerW,
      maxEnergyWh: opts.maxEnergyWh,
      done,
      resolve,
      stopping: false,
      timer: setInterval(() => void this.liveTick(connectorId), intervalMs),
    };
    session.timer.unref();
    this.live.set(connectorId, session);
    return { tx, done };
  }

  private liveMeterIntervalMs(): number {
    const s = Number(this.is16 ? this.config16.get('MeterValueSampleInterval')?.value : this.variables201.get('SampledDataCtrlr.TxUpdatedInterval')?.value);
    // the configured interval is in (simulated) seconds; the option can make it finer for tests
    const configured = s > 0 ? (s * 1000) / this.opts.liveTimeScale : this.opts.liveMeterIntervalMs;
    return Math.max(50, Math.min(configured, this.opts.liveMeterIntervalMs));
  }

  private advanceLive(session: LiveSession): number {
    const now = performance.now();
    const simulatedMs = (now - session.lastTick) * this.opts.liveTimeScale;
    session.lastTick = now;
    const exact = (session.powerW * simulatedMs) / 3_600_000 + session.fractionWh;
    let add = Math.floor(exact);
    session.fractionWh = exact - add;
    const delivered = session.tx.lastWh - session.tx.meterStartWh;
    if (session.maxEnergyWh !== undefined && delivered + add >= session.maxEnergyWh) add = session.maxEnergyWh - delivered;
    return session.tx.lastWh + Math.max(0, add);
  }

  private async liveTick(connectorId: number): Promise<void> {
    const session = this.live.get(connectorId);
    if (!session || session.stopping) return;
    const wh = this.advanceLive(session);
    try {
      await this.txMeter(session.tx, wh, this.now(), session.powerW);
    } catch {
      /* counted in stats; keep charging */
    }
    if (session.maxEnergyWh !== undefined && wh - session.tx.meterStartWh >= session.maxEnergyWh) {
      await this.stopLiveSession(connectorId, 'EVDisconnected').catch(() => {});
    }
  }

  async stopLiveSession(connectorId: number, reason: 'Local' | 'Remote' | 'HardReset' | 'SoftReset' | 'EVDisconnected' = 'Local'): Promise<SessionRecord | undefined> {
    const session = this.live.get(connectorId);
    if (!session || session.stopping) return session ? session.done : undefined;
    session.stopping = true;
    clearInterval(session.timer);
    const wh = this.advanceLive(session);
    const record = await this.endTx(session.tx, wh, this.now(), reason);
    this.live.delete(connectorId);
    if (reason !== 'HardReset' && reason !== 'SoftReset') {
      await this.statusNotification(connectorId, 'Finishing').catch(() => {});
      await this.statusNotification(connectorId, 'Available').catch(() => {});
    }
    session.resolve(record);
    return record;
  }

  private findLiveByTxId(id: unknown): number | undefined {
    for (const [c, s] of this.live) {
      if (String(s.tx.transactionId) === String(id) || s.tx.localId === String(id)) return c;
    }
    return undefined;
  }

  // ───────────────────────────── reset ─────────────────────────────

  /** what a charger does on Reset: stop transactions, drop the connection, restart, connect and boot again */
  async reboot(kind: 'Hard' | 'Soft' | 'Immediate'): Promise<void> {
    if (this.rebooting) return this.rebooting;
    this.rebooting = (async () => {
      const reason = kind === 'Soft' ? 'SoftReset' : 'HardReset';
      for (const c of [...this.live.keys()]) await this.stopLiveSession(c, reason).catch(() => {});
      const client = this.client;
      this.closing = true;
      if (client) {
        await client.close({ code: 1012, reason: 'reset' }).catch(() => {});
        if (this.client === client) this.onDisconnected();
      }
      await sleep(this.opts.rebootDelayMs, this.abort.signal);
      if (this.abort.signal.aborted) return;
      this.closing = false;
      await this.connect();
      await this.boot(this.is16 ? 'PowerUp' : 'RemoteReset');
      await this.afterBoot();
      this.emit('rebooted');
    })()
      .catch((err) => this.log(`${this.opts.identity}: reboot failed: ${(err as Error).message}`))
      .finally(() => {
        this.rebooting = undefined;
      });
    return this.rebooting;
  }

  // ───────────────────────────── answering the central system ─────────────────────────────

  private after(fn: () => Promise<unknown>): void {
    // run once the answer is on the wire
    setTimeout(() => void fn().catch((err) => this.log(`${this.opts.identity}: ${(err as Error).message}`)), 20);
  }

  private attachHandlers(client: SimRpcClient): void {
    client.handle(async ({ method, params }: CallHandlerArgs) => {
      this.received.push({ method, params });
      this.emit('call', method, params);
      const h = (this.is16 ? this.handle16(method, params) : this.handle201(method, params)) ?? (Object.hasOwn(COMMON_ANSWERS, method) ? COMMON_ANSWERS[method] : undefined);
      if (h === undefined) throw rpcError(this.is16 ? 'NotSupported' : 'NotImplemented', `${method} is not supported by the simulator`);
      return h;
    });
  }

  /**
   * A new Basic-auth password from the central system (1.6 AuthorizationKey, 2.0.1 BasicAuthPassword), used from
   * the next connection on, as real chargers do; the open socket stays up. 16–40 characters, else Rejected.
   */
  private adoptPassword(password: string | undefined): 'Accepted' | 'Rejected' {
    if (password === undefined || !/^[\x21-\x7e]{16,40}$/.test(password)) return 'Rejected';
    this.opts.password = password;
    this.emit('password', password);
    return 'Accepted';
  }

  private handle16(method: string, p: any): Record<string, unknown> | undefined {
    switch (method) {
      case 'Reset':
        this.after(() => this.reboot(p?.type === 'Soft' ? 'Soft' : 'Hard'));
        return { status: 'Accepted' };
      case 'TriggerMessage': {
        const what = String(p?.requestedMessage);
        const connectorId = Number(p?.connectorId ?? 0);
        const connectors = connectorId > 0 ? [connectorId] : Array.from({ length: this.opts.connectors }, (_, i) => i + 1);
        if (what === 'BootNotification') this.after(() => this.boot('Triggered'));
        else if (what === 'Heartbeat') this.after(() => this.heartbeat());
        else if (what === 'StatusNotification')
          this.after(async () => {
            for (const c of connectors) await this.statusNotification(c, this.live.has(c) ? 'Charging' : 'Available');
          });
        else if (what === 'MeterValues')
          this.after(async () => {
            for (const c of connectors) await this.meterValuesIdle(c);
          });
        else if (what === 'DiagnosticsStatusNotification') this.after(() => this.send('DiagnosticsStatusNotification', { status: 'Idle' }));
        else if (what === 'FirmwareStatusNotification') this.after(() => this.send('FirmwareStatusNotification', { status: 'Idle' }));
        else return { status: 'NotImplemented' };
        return { status: 'Accepted' };
      }
      case 'ChangeConfiguration': {
        if (p?.key === 'AuthorizationKey') return { status: this.adoptPassword(hexDecodedKey(String(p?.value))) };
        const entry = this.config16.get(String(p?.key));
        if (!entry) return { status: 'NotSupported' };
        if (entry.readonly) return { status: 'Rejected' };
        const value = String(p?.value);
        if (/Interval$/.test(String(p?.key)) && !/^\d+$/.test(value)) return { status: 'Rejected' };
        entry.value = value;
        if (p?.key === 'HeartbeatInterval') this.setHeartbeatInterval(Number(value));
        return { status: 'Accepted' };
      }
      case 'GetConfiguration': {
        const keys: string[] | undefined = Array.isArray(p?.key) && p.key.length > 0 ? p.key : undefined;
        const known = keys ? keys.filter((k) => this.config16.has(k)) : [...this.config16.keys()];
        const unknown = keys ? keys.filter((k) => !this.config16.has(k)) : [];
        return {
          configurationKey: known.map((key) => ({ key, readonly: this.config16.get(key)!.readonly, value: this.config16.get(key)!.value })),
          ...(unknown.length ? { unknownKey: unknown } : {}),
        };
      }
      case 'RemoteStartTransaction': {
        const connectorId = Number(p?.connectorId ?? 1);
        if (connectorId < 1 || connectorId > this.opts.connectors || this.live.has(connectorId)) return { status: 'Rejected' };
        this.after(() => this.startLiveSession({ connectorId, idTag: String(p?.idTag), trigger: 'RemoteStart' }));
        return { status: 'Accepted' };
      }
      case 'RemoteStopTransaction': {
        const c = this.findLiveByTxId(p?.transactionId);
        if (c === undefined) return { status: 'Rejected' };
        this.after(() => this.stopLiveSession(c, 'Remote'));
        return { status: 'Accepted' };
      }
      default:
        return undefined;
    }
  }

  private handle201(method: string, p: any): Record<string, unknown> | undefined {
    switch (method) {
      case 'Reset': {
        if (p?.type === 'OnIdle' && this.live.size > 0) {
          const waitIdle = async () => {
            await Promise.all([...this.live.values()].map((s) => s.done));
            await this.reboot('Immediate');
          };
          this.after(waitIdle);
          return { status: 'Scheduled' };
        }
        this.after(() => this.reboot('Immediate'));
        return { status: 'Accepted' };
      }
      case 'TriggerMessage': {
        const what = String(p?.requestedMessage);
        const evseId = Number(p?.evse?.id ?? 0);
        const evses = evseId > 0 ? [evseId] : Array.from({ length: this.opts.connectors }, (_, i) => i + 1);
        if (what === 'BootNotification') this.after(() => this.boot('Triggered'));
        else if (what === 'Heartbeat') this.after(() => this.heartbeat());
        else if (what === 'StatusNotification')
          this.after(async () => {
            for (const c of evses) await this.statusNotification(c, this.live.has(c) ? 'Charging' : 'Available');
          });
        else if (what === 'MeterValues')
          this.after(async () => {
            for (const c of evses) await this.meterValuesIdle(c);
          });
        else if (what === 'TransactionEvent') {
          const sessions = evses.map((c) => this.live.get(c)).filter((s): s is LiveSession => !!s);
          if (sessions.length === 0) return { status: 'Rejected' };
          this.after(async () => {
            for (const s of sessions) await this.txMeter(s.tx, s.tx.lastWh, this.now(), s.powerW);
          });
        } else if (what === 'FirmwareStatusNotification') this.after(() => this.send('FirmwareStatusNotification', { status: 'Idle' }));
        else if (what === 'LogStatusNotification') this.after(() => this.send('LogStatusNotification', { status: 'Idle' }));
        else return { status: 'NotImplemented' };
        return { status: 'Accepted' };
      }
      case 'SetVariables': {
        const data: any[] = Array.isArray(p?.setVariableData) ? p.setVariableData : [];
        return {
          setVariableResult: data.map((d) => {
            const component = { name: String(d?.component?.name) };
            const variable = { name: String(d?.variable?.name) };
            const key = `${component.name}.${variable.name}`;
            if (key === 'SecurityCtrlr.BasicAuthPassword' && (!d?.attributeType || d.attributeType === 'Actual')) {
              return { attributeStatus: this.adoptPassword(String(d?.attributeValue)), component, variable };
            }
            const entry = this.variables201.get(key);
            const known = [...this.variables201.keys()].some((k) => k.startsWith(component.name + '.'));
            let attributeStatus = 'Accepted';
            if (!known) attributeStatus = 'UnknownComponent';
            else if (!entry) attributeStatus = 'UnknownVariable';
            else if (d?.attributeType && d.attributeType !== 'Actual') attributeStatus = 'NotSupportedAttributeType';
            else if (entry.readonly) attributeStatus = 'Rejected';
            else {
              entry.value = String(d?.attributeValue);
              if (key === 'OCPPCommCtrlr.HeartbeatInterval') this.setHeartbeatInterval(Number(entry.value));
            }
            return { attributeStatus, component, variable, ...(d?.attributeType ? { attributeType: d.attributeType } : {}) };
          }),
        };
      }
      case 'GetVariables': {
        const data: any[] = Array.isArray(p?.getVariableData) ? p.getVariableData : [];
        return {
          getVariableResult: data.map((d) => {
            const component = { name: String(d?.component?.name) };
            const variable = { name: String(d?.variable?.name) };
            const entry = this.variables201.get(`${component.name}.${variable.name}`);
            const known = [...this.variables201.keys()].some((k) => k.startsWith(component.name + '.'));
            if (!known) return { attributeStatus: 'UnknownComponent', component, variable };
            if (!entry) return { attributeStatus: 'UnknownVariable', component, variable };
            return { attributeStatus: 'Accepted', attributeValue: entry.value, component, variable };
          }),
        };
      }
      case 'RequestStartTransaction': {
        const evseId = Number(p?.evseId ?? 1);
        if (evseId < 1 || evseId > this.opts.connectors || this.live.has(evseId)) return { status: 'Rejected' };
        this.after(() =>
          this.startLiveSession({
            connectorId: evseId,
            idTag: String(p?.idToken?.idToken ?? 'REMOTE'),
            trigger: 'RemoteStart',
            ...(p?.remoteStartId !== undefined ? { remoteStartId: Number(p.remoteStartId) } : {}),
          }),
        );
        return { status: 'Accepted' };
      }
      case 'RequestStopTransaction': {
        const c = this.findLiveByTxId(p?.transactionId);
        if (c === undefined) return { status: 'Rejected' };
        this.after(() => this.stopLiveSession(c, 'Remote'));
        return { status: 'Accepted' };
      }
      default:
        return undefined;
    }
  }
}
