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
//
// The files: link.ts (connection, calls, offline queue, boot, heartbeat), this file (meter, transactions, reset,
// answering), v16.ts / v201.ts (each version's messages and answers), live-session.ts (real-time charging),
// charge-point-types.ts (names, records, helpers).
import crypto from 'node:crypto';
import {
  energyFormat,
  idTagAccepted,
  IdTagRejected,
  iso,
  sleep,
  type BootReason,
  type ChargePointOptions,
  type EnergyFormat,
  type Quirk,
  type SessionRecord,
  type Setting,
  type StopReason,
  type Tx,
} from './charge-point-types.ts';
import { ChargePointLink, type LinkOptions } from './link.ts';
import { LiveSessions, type LiveStart } from './live-session.ts';
import { loadMeterState, passwordDigest, savedPasswordFor, saveMeterState, stateFile, type MeterState } from './meter-state.ts';

export * from './charge-point-types.ts';

/** One OCPP version's messages and answers (v16.ts, v201.ts); the core above never names a version. */
export interface ProtocolAdapter {
  readonly heartbeatKey: string;
  readonly meterIntervalKey: string;
  /** the CALLERROR code for a call the simulator does not implement */
  readonly notSupported: string;
  settings(o: { connectors: number; vendor: string; model: string; meterS: string }): Map<string, Setting>;
  bootRequest(o: LinkOptions, reason: BootReason): Record<string, unknown>;
  /** status in 1.6 names (Available, Preparing, Charging, Finishing, …) */
  statusRequest(connectorId: number, status: string, at: Date): Record<string, unknown>;
  authorizeRequest(idTag: string): Record<string, unknown>;
  authorizeStatus(res: any): string | undefined;
  /** a register value measured at `location` (the connector's meter, `Outlet`, unless said) */
  energyValue(v: number, f: EnergyFormat, context: string, phase: string | undefined, location?: 'Outlet' | 'Inlet' | 'EV'): Record<string, unknown>;
  powerValue(powerW: number, context: string): Record<string, unknown>;
  idleMeterValues(connectorId: number, mv: Record<string, unknown>): Record<string, unknown>;
  begin(cp: ChargePoint, tx: Tx, o: { at: Date; trigger?: 'Authorized' | 'RemoteStart'; remoteStartId?: number }): Promise<void>;
  /** a reading of a running transaction: periodic, or sent because the central system asked (TriggerMessage) */
  meter(cp: ChargePoint, tx: Tx, mv: Record<string, unknown>, at: Date, context: 'Sample.Periodic' | 'Trigger'): Promise<void>;
  end(cp: ChargePoint, tx: Tx, wh: number, at: Date, reason: StopReason): Promise<void>;
  handle(cp: ChargePoint, method: string, params: any): Record<string, unknown> | undefined;
}

/** simulator `other-locations`: the grid inlet's register runs this far ahead of the connector's (the charger's own use) */
const INLET_OFFSET_WH = 1_250_000;

/** Calls both protocols answer the same way (their responses have the same shape in 1.6 and 2.0.1). */
const COMMON_ANSWERS: Record<string, Record<string, unknown>> = {
  ChangeAvailability: { status: 'Accepted' },
  UnlockConnector: { status: 'Unlocked' },
  ClearCache: { status: 'Accepted' },
  DataTransfer: { status: 'UnknownVendorId' },
};

export class ChargePoint extends ChargePointLink {
  /** completed (and provisionally stopped) sessions, in order */
  readonly sessions: SessionRecord[] = [];
  /** sessions charging in real time, by connector */
  readonly live = new LiveSessions(this);
  private registers = new Map<number, number>();
  /** the (simulated) time of each connector's last register reading */
  private readonly lastReadingAt = new Map<number, string>();
  /** where the meter is kept between runs (meter-state.ts); undefined: not kept */
  readonly stateDir: string | undefined;
  /** the meter as the previous run left it (undefined: a new meter, or none kept) */
  readonly restored: MeterState | undefined;
  private readonly givenPassword: string | null;
  private passwordSet: MeterState['password'];
  private readonly changedSettings = new Set<string>();
  private saveTimer: NodeJS.Timeout | undefined;
  /** the central system changed a setting or the password: worth keeping even before a boot was accepted */
  private stateTouched = false;
  /** why the last save failed (cleared by a save that succeeds); the CLI reports it at the end */
  saveError: string | undefined;
  /** the password the central system set in an earlier run replaced the one this run was given (or had none) */
  usesSavedPassword: { at: string } | undefined;

  constructor(options: ChargePointOptions) {
    super(options);
    for (let c = 1; c <= this.opts.connectors; c++) this.registers.set(c, this.opts.initialRegisterWh);
    this.stateDir = options.stateDir;
    this.givenPassword = passwordDigest(options.password);
    this.restored = this.stateDir ? loadMeterState(this.stateDir, this.opts.identity) : undefined;
    if (this.restored) this.restore(this.restored);
  }

  register(connectorId: number): number {
    return this.registers.get(connectorId) ?? 0;
  }

  setRegister(connectorId: number, wh: number): void {
    this.registers.set(connectorId, wh);
    // a reading's register is written within a second; a transaction's end at once (endTx)
    if (this.stateDir && !this.saveTimer) {
      this.saveTimer = setTimeout(() => this.saveState(), 1000);
      this.saveTimer.unref();
    }
  }

  // ───────────────────────────── the meter between runs ─────────────────────────────

  private restore(state: MeterState): void {
    for (const [c, wh] of Object.entries(state.registers)) if (this.registers.has(Number(c))) this.registers.set(Number(c), wh);
    for (const [c, at] of Object.entries(state.lastReadingAt)) if (this.registers.has(Number(c))) this.lastReadingAt.set(Number(c), at);
    for (const [key, value] of Object.entries(state.settings)) {
      const setting = this.settings.get(key);
      if (!setting || setting.readonly) continue;
      setting.value = value;
      this.changedSettings.add(key);
    }
    // the password the central system set replaces the one this run was given, unless another one was given
    if (state.password && savedPasswordFor(state, this.opts.password)) {
      this.opts.password = state.password.value;
      this.passwordSet = state.password;
      this.usesSavedPassword = { at: state.password.at };
    }
    const registers = [...this.registers].map(([c, wh]) => `connector ${c} at ${wh} Wh`).join(', ');
    this.log(`${this.opts.identity}: meter continues from ${stateFile(this.stateDir!, this.opts.identity)} (${registers})`);
  }

  /** a setting the central system changed (ChangeConfiguration, SetVariables): kept for the next run */
  settingChanged(key: string): void {
    this.changedSettings.add(key);
    this.stateTouched = true;
    this.saveState();
  }

  /** write the meter now (no-op when none is kept); a failure counts as an error of the run */
  saveState(): void {
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    if (!this.stateDir) return;
    // nothing to keep before the central system accepted the charger (a refused connection, a 401, writes no file),
    // unless it changed a setting or the password meanwhile (during Pending)
    if (this.bootCount === 0 && !this.stateTouched) return;
    const settings = Object.fromEntries([...this.changedSettings].map((k) => [k, this.settings.get(k)!.value]));
    try {
      saveMeterState(this.stateDir, {
        version: 1,
        identity: this.opts.identity,
        registers: Object.fromEntries([...this.registers].map(([c, wh]) => [String(c), wh])),
        lastReadingAt: Object.fromEntries([...this.lastReadingAt].map(([c, at]) => [String(c), at])),
        settings,
        ...(this.passwordSet ? { password: this.passwordSet } : {}),
        updatedAt: this.now().toISOString(),
      });
      this.saveError = undefined;
    } catch (err) {
      this.saveError = `${this.opts.identity}: meter state not saved to ${stateFile(this.stateDir, this.opts.identity)}: ${(err as Error).message}`;
      this.stats.recordError(this.saveError);
    }
  }

  /** total energy of the sessions this charge point completed */
  deliveredWh(): number {
    return this.sessions.reduce((s, r) => s + r.energyWh, 0);
  }

  liveTx(connectorId: number): Tx | undefined {
    return this.live.get(connectorId)?.tx;
  }

  protected async afterBoot(flush: { duplicateFirst?: string } = {}): Promise<void> {
    for (let c = 1; c <= this.opts.connectors; c++) {
      await this.statusNotification(c, this.live.has(c) ? 'Charging' : 'Available');
    }
    await this.flushQueue(flush);
  }

  /** the run is being stopped: waits end, and every live session is stopped as on a local stop (reason Local) */
  override interrupt(): void {
    super.interrupt();
    void this.stopCharging('Local');
  }

  /** stop every live session (as the charger's own stop: reason Local unless said) and wait until each has ended */
  async stopCharging(reason: StopReason = 'Local'): Promise<SessionRecord[]> {
    const stopped = await Promise.all(this.live.connectors().map((c) => this.stopLiveSession(c, reason).catch(() => undefined)));
    return stopped.filter((r): r is SessionRecord => r !== undefined);
  }

  override async close(): Promise<void> {
    this.closing = true;
    this.live.clear();
    this.saveState();
    await super.close();
  }

  // ───────────────────────────── status, authorize ─────────────────────────────

  /** 1.6 status names; 2.0.1 maps them onto Available/Occupied/Unavailable/Faulted */
  async statusNotification(connectorId: number, status: string, at: Date = this.now()): Promise<void> {
    if (!this.connected) return; // chargers report the current state after reconnecting, not the backlog
    await this.send('StatusNotification', this.adapter.statusRequest(connectorId, status, at));
  }

  async authorize(idTag: string): Promise<string | undefined> {
    if (!this.connected) return undefined; // offline: local authorisation
    return this.adapter.authorizeStatus(await this.send('Authorize', this.adapter.authorizeRequest(idTag)));
  }

  /**
   * Authorize before a local start, as a charger does: an id tag the central system does not accept is not charged
   * on; the connector is free again at `freeAt` and IdTagRejected is thrown. Offline the charger authorises locally.
   */
  async authorizeStart(connectorId: number, idTag: string, at: Date, freeAt: Date): Promise<void> {
    const status = await this.authorize(idTag);
    if (idTagAccepted(status)) return;
    await this.statusNotification(connectorId, 'Available', freeAt);
    throw new IdTagRejected({ startedAt: iso(at), connectorId, idTag, status: String(status), by: 'Authorize', transactionId: null });
  }

  /**
   * A start whose answer did not accept the id tag (1.6 StartTransaction idTagInfo, 2.0.1 TransactionEvent idTokenInfo)
   * is stopped at once with reason DeAuthorized and nothing charged (1.6 StopTransactionOnInvalidId, 2.0.1
   * StopTxOnInvalidId); the connector is free again at `freeAt` and IdTagRejected, carrying that transaction, is thrown.
   */
  async stopIfDeauthorized(tx: Tx, at: Date, freeAt: Date): Promise<void> {
    if (idTagAccepted(tx.idTagStatus)) return;
    const status = String(tx.idTagStatus);
    const record = await this.endTx(tx, tx.meterStartWh, at, 'DeAuthorized');
    await this.statusNotification(tx.connectorId, 'Finishing', at);
    await this.statusNotification(tx.connectorId, 'Available', freeAt);
    const by = this.is16 ? 'StartTransaction' : 'TransactionEvent';
    throw new IdTagRejected({ startedAt: record.startedAt, connectorId: tx.connectorId, idTag: tx.idTag, status, by, transactionId: record.transactionId }, record);
  }

  // ───────────────────────────── meter values ─────────────────────────────

  meterValue(wh: number, at: Date, context: string, quirks: readonly Quirk[], powerW?: number): Record<string, unknown> {
    const f = energyFormat(wh, quirks);
    const sampled = f.values.map(({ v, phase }) => this.adapter.energyValue(v, f, context, phase));
    if (quirks.includes('other-locations')) {
      // first, as some firmware sends them: the vehicle's own figure (a few per cent under the meter's) and the grid
      // inlet's register (the whole charger: its own consumption and any other connector on top)
      sampled.unshift(this.adapter.energyValue(Math.floor((wh * 96) / 100), f, context, undefined, 'EV'), this.adapter.energyValue(wh + INLET_OFFSET_WH, f, context, undefined, 'Inlet'));
    }
    if (powerW !== undefined && (context === 'Sample.Periodic' || context === 'Trigger')) sampled.push(this.adapter.powerValue(powerW, context));
    return { timestamp: iso(at), sampledValue: sampled };
  }

  /** a station-level or connector reading outside any transaction (a triggered one, or clock-aligned: Sample.Clock) */
  async meterValuesIdle(connectorId: number, at: Date = this.now(), context: 'Trigger' | 'Sample.Clock' = 'Trigger'): Promise<void> {
    const mv = this.meterValue(this.register(connectorId), at, context, this.opts.quirks);
    await this.call('MeterValues', () => this.adapter.idleMeterValues(connectorId, mv));
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
    this.lastReadingAt.set(opts.connectorId, opts.at.toISOString());
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
        offline: !this.connected,
      },
    };
    await this.adapter.begin(this, tx, {
      at: opts.at,
      ...(opts.trigger ? { trigger: opts.trigger } : {}),
      ...(opts.remoteStartId !== undefined ? { remoteStartId: opts.remoteStartId } : {}),
    });
    return tx;
  }

  /** a register reading of a running transaction: periodic, or triggered by the central system (context Trigger) */
  async txMeter(tx: Tx, wh: number, at: Date, powerW?: number, context: 'Sample.Periodic' | 'Trigger' = 'Sample.Periodic'): Promise<void> {
    tx.lastWh = wh;
    this.lastReadingAt.set(tx.connectorId, at.toISOString());
    this.setRegister(tx.connectorId, wh);
    await this.adapter.meter(this, tx, this.meterValue(wh, at, context, tx.quirks, powerW), at, context);
  }

  /** stop the transaction at register `wh` */
  async endTx(tx: Tx, wh: number, at: Date, reason: StopReason = 'Local'): Promise<SessionRecord> {
    tx.lastWh = wh;
    this.lastReadingAt.set(tx.connectorId, at.toISOString());
    this.setRegister(tx.connectorId, wh);
    await this.adapter.end(this, tx, wh, at, reason);
    tx.record.stoppedAt = iso(at);
    tx.record.meterStopWh = wh;
    tx.record.energyWh = wh - tx.meterStartWh;
    tx.record.stopReason = reason;
    if (tx.transactionId !== null) tx.record.transactionId = String(tx.transactionId);
    this.sessions.push(tx.record);
    this.saveState();
    this.emit('sessionEnded', tx.record);
    return tx.record;
  }

  // ───────────────────────────── transactions (live, real time) ─────────────────────────────

  /** start charging now and report the register every meter interval until stopped (or maxEnergyWh reached) */
  startLiveSession(opts: LiveStart = {}): Promise<{ tx: Tx; done: Promise<SessionRecord> }> {
    return this.live.start(opts);
  }

  stopLiveSession(connectorId: number, reason: StopReason = 'Local'): Promise<SessionRecord | undefined> {
    return this.live.stop(connectorId, reason);
  }

  // ───────────────────────────── reset ─────────────────────────────

  /** what a charger does on Reset: stop transactions, drop the connection, restart, connect and boot again */
  async reboot(kind: 'Hard' | 'Soft' | 'Immediate'): Promise<void> {
    if (this.rebooting) return this.rebooting;
    this.rebooting = (async () => {
      const reason = kind === 'Soft' ? 'SoftReset' : 'HardReset';
      for (const c of this.live.connectors()) await this.stopLiveSession(c, reason).catch(() => {});
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

  /** run fn once the answer is on the wire */
  after(fn: () => Promise<unknown>): void {
    setTimeout(() => void fn().catch((err) => this.log(`${this.opts.identity}: ${(err as Error).message}`)), 20);
  }

  protected answer(method: string, params: any): Record<string, unknown> | undefined {
    return this.adapter.handle(this, method, params) ?? (Object.hasOwn(COMMON_ANSWERS, method) ? COMMON_ANSWERS[method] : undefined);
  }

  /**
   * A new Basic-auth password from the central system (1.6 AuthorizationKey, 2.0.1 BasicAuthPassword), used from
   * the next connection on, as real chargers do; the open socket stays up. 16–40 characters, else Rejected.
   */
  adoptPassword(password: string | undefined): 'Accepted' | 'Rejected' {
    if (password === undefined || !/^[\x21-\x7e]{16,40}$/.test(password)) return 'Rejected';
    this.opts.password = password;
    this.passwordSet = { value: password, replaces: this.givenPassword, at: this.now().toISOString() };
    this.stateTouched = true;
    this.saveState();
    this.emit('password', password);
    return 'Accepted';
  }
}
