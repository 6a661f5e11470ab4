// Live sessions of the simulated charge point: charging in real time (a remote start, the CLI's --realtime),
// the register reported every meter interval until stopped or a maximum energy is reached. Energy advances at
// the session's power × elapsed (simulated) time, in integer Wh with the fraction carried over.
import type { ChargePoint } from './charge-point.ts';
import type { SessionRecord, StopReason, Tx } from './charge-point-types.ts';

export interface LiveSession {
  tx: Tx;
  /** the meter interval's timer, from the moment the charger reports Charging */
  timer: NodeJS.Timeout | undefined;
  lastTick: number;
  fractionWh: number;
  powerW: number;
  maxEnergyWh: number | undefined;
  done: Promise<SessionRecord>;
  resolve: (r: SessionRecord) => void;
  stopping: boolean;
}

export interface LiveStart {
  connectorId?: number;
  idTag?: string;
  powerW?: number;
  maxEnergyWh?: number;
  trigger?: 'Authorized' | 'RemoteStart';
  remoteStartId?: number;
}

export class LiveSessions {
  private readonly sessions = new Map<number, LiveSession>();

  constructor(private readonly cp: ChargePoint) {}

  has(connectorId: number): boolean {
    return this.sessions.has(connectorId);
  }

  get(connectorId: number): LiveSession | undefined {
    return this.sessions.get(connectorId);
  }

  get size(): number {
    return this.sessions.size;
  }

  connectors(): number[] {
    return [...this.sessions.keys()];
  }

  /** resolves when every session running now has ended */
  async idle(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => s.done));
  }

  /** stop the timers without ending the transactions (the charge point is closing) */
  clear(): void {
    for (const s of this.sessions.values()) clearInterval(s.timer);
    this.sessions.clear();
  }

  findByTxId(id: unknown): number | undefined {
    for (const [c, s] of this.sessions) {
      if (String(s.tx.transactionId) === String(id) || s.tx.localId === String(id)) return c;
    }
    return undefined;
  }

  /** start charging now and report the register every meter interval until stopped (or maxEnergyWh reached) */
  async start(opts: LiveStart = {}): Promise<{ tx: Tx; done: Promise<SessionRecord> }> {
    const cp = this.cp;
    const connectorId = opts.connectorId ?? 1;
    if (this.sessions.has(connectorId)) throw new Error(`connector ${connectorId} is already charging`);
    const idTag = opts.idTag ?? 'SIMTAG01';
    await cp.statusNotification(connectorId, 'Preparing');
    // a rejected id tag: no transaction, or (the start's answer) one stopped at once, reason DeAuthorized
    if (opts.trigger !== 'RemoteStart') await cp.authorizeStart(connectorId, idTag, cp.now(), cp.now());
    const tx = await cp.beginTx({
      connectorId,
      idTag,
      at: cp.now(),
      trigger: opts.trigger ?? 'Authorized',
      ...(opts.remoteStartId !== undefined ? { remoteStartId: opts.remoteStartId } : {}),
    });
    await cp.stopIfDeauthorized(tx, cp.now(), cp.now());
    let resolve!: (r: SessionRecord) => void;
    const done = new Promise<SessionRecord>((r) => (resolve = r));
    const session: LiveSession = {
      tx,
      lastTick: performance.now(),
      fractionWh: 0,
      powerW: opts.powerW ?? cp.opts.livePowerW,
      maxEnergyWh: opts.maxEnergyWh,
      done,
      resolve,
      stopping: false,
      timer: undefined,
    };
    // known from the moment the transaction started: a stop the central system sends on seeing the start finds it
    this.sessions.set(connectorId, session);
    await cp.statusNotification(connectorId, 'Charging');
    // the run was stopped while this session started: stopped at once, as on a local stop
    if (cp.interrupted && !session.stopping) void this.stop(connectorId, 'Local').catch(() => {});
    if (!session.stopping) {
      session.lastTick = performance.now();
      session.timer = setInterval(() => void this.tick(connectorId), this.intervalMs());
      session.timer.unref();
    }
    return { tx, done };
  }

  async stop(connectorId: number, reason: StopReason = 'Local'): Promise<SessionRecord | undefined> {
    const session = this.sessions.get(connectorId);
    if (!session || session.stopping) return session ? session.done : undefined;
    session.stopping = true;
    clearInterval(session.timer);
    const wh = this.advance(session);
    const record = await this.cp.endTx(session.tx, wh, this.cp.now(), reason);
    this.sessions.delete(connectorId);
    if (reason !== 'HardReset' && reason !== 'SoftReset') {
      await this.cp.statusNotification(connectorId, 'Finishing').catch(() => {});
      await this.cp.statusNotification(connectorId, 'Available').catch(() => {});
    }
    session.resolve(record);
    return record;
  }

  private intervalMs(): number {
    const { opts } = this.cp;
    const s = Number(this.cp.settings.get(this.cp.adapter.meterIntervalKey)?.value);
    // the configured interval is in (simulated) seconds; the option can make it finer for tests
    const configured = s > 0 ? (s * 1000) / opts.liveTimeScale : opts.liveMeterIntervalMs;
    return Math.max(50, Math.min(configured, opts.liveMeterIntervalMs));
  }

  private advance(session: LiveSession): number {
    const now = performance.now();
    const simulatedMs = (now - session.lastTick) * this.cp.opts.liveTimeScale;
    session.lastTick = now;
    const exact = (session.powerW * simulatedMs) / 3_600_000 + session.fractionWh;
    let add = Math.floor(exact);
    session.fractionWh = exact - add;
    const delivered = session.tx.lastWh - session.tx.meterStartWh;
    if (session.maxEnergyWh !== undefined && delivered + add >= session.maxEnergyWh) add = session.maxEnergyWh - delivered;
    return session.tx.lastWh + Math.max(0, add);
  }

  private async tick(connectorId: number): Promise<void> {
    const session = this.sessions.get(connectorId);
    if (!session || session.stopping) return;
    const wh = this.advance(session);
    try {
      await this.cp.txMeter(session.tx, wh, this.cp.now(), session.powerW);
    } catch {
      /* counted in stats; keep charging */
    }
    if (session.maxEnergyWh !== undefined && wh - session.tx.meterStartWh >= session.maxEnergyWh) {
      await this.stop(connectorId, 'EVDisconnected').catch(() => {});
    }
  }
}
