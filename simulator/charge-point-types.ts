// What both protocol versions of the simulated charge point share: the names (protocols, quirks), the records
// of a transaction, the options, and the small helpers for timestamps and integer Wh. No OCPP message is built here.
import type { Stats } from './stats.ts';

export type Protocol = 'ocpp1.6' | 'ocpp2.0.1';
export const PROTOCOLS: readonly Protocol[] = ['ocpp1.6', 'ocpp2.0.1'];

/** Deviations real chargers show (issue 5 item 2); the first six keep the energy totals intact. */
export type Quirk =
  | 'kwh' // register values sent in kWh (correctly labelled)
  | 'phases' // only per-phase registers L1..L3, no phase-less total
  | 'register-reset' // the register restarts at 0 for every transaction
  | 'no-txid' // periodic readings without transactionId (1.6) / as MeterValues instead of TransactionEvent (2.0.1)
  | 'no-subprotocol' // the WebSocket upgrade offers no subprotocol (served as 1.6 by most systems)
  | 'other-locations' // beside the connector's register, the vehicle's own figure (location EV) and the grid inlet's (the whole charger), sent first
  | 'kwh-as-wh' // kWh figures labelled Wh (a broken firmware; totals deliberately wrong)
  | 'wh-as-kwh'; // Wh figures labelled kWh (a broken firmware; totals deliberately wrong)
export const QUIRKS: readonly Quirk[] = ['kwh', 'phases', 'register-reset', 'no-txid', 'no-subprotocol', 'other-locations', 'kwh-as-wh', 'wh-as-kwh'];
/** the quirks a central system must absorb without changing the energy (the default `quirks` set) */
export const TOTAL_PRESERVING_QUIRKS: readonly Quirk[] = ['kwh', 'phases', 'register-reset', 'no-txid', 'no-subprotocol', 'other-locations'];

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
  /** keep the meter between runs: a state file per identity in this directory (meter-state.ts); default none */
  stateDir?: string | undefined;
  /** every OCPP frame sent and received, one line each (the CLI's --verbose) */
  frames?: ((line: string) => void) | undefined;
}

export type StopReason = 'Local' | 'Remote' | 'HardReset' | 'SoftReset' | 'EVDisconnected' | 'DeAuthorized';
export type BootReason = 'PowerUp' | 'RemoteReset' | 'Triggered' | 'ApplicationReset';

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
  /**
   * the central system's verdict on the id tag in its answer to the start (1.6 StartTransaction idTagInfo.status,
   * 2.0.1 TransactionEvent Started idTokenInfo.status); undefined while unanswered (offline) or when it gave none
   */
  idTagStatus?: string | undefined;
}

/** an id tag verdict a charger charges on: Accepted, or none given (offline, local authorisation) */
export function idTagAccepted(status: string | undefined): boolean {
  return status === undefined || status === 'Accepted';
}

/** a session the central system did not authorise, as a scenario reports it */
export interface Rejection {
  startedAt: string;
  connectorId: number;
  idTag: string;
  /** the status the central system answered (Invalid, Blocked, Expired, …) */
  status: string;
  /** the answer that carried it: Authorize, StartTransaction (1.6) or TransactionEvent (2.0.1) */
  by: string;
  /** the transaction stopped at once (a start answer's rejection); null when none was started (Authorize's) */
  transactionId: string | null;
}

export function describeRejection(r: Rejection): string {
  return `session from ${r.startedAt}: id tag ${r.idTag} ${r.status} (${r.by}); ${r.by === 'Authorize' ? 'not started' : 'transaction stopped at once (DeAuthorized), nothing charged'}`;
}

/**
 * A session the central system did not authorise: its Authorize answer was not Accepted (the charger never
 * started), or its start answer was not (the charger stopped the transaction at once, reason DeAuthorized, as
 * with 1.6 StopTransactionOnInvalidId / 2.0.1 StopTxOnInvalidId; `record` is that transaction).
 */
export class IdTagRejected extends Error {
  constructor(
    readonly rejection: Rejection,
    readonly record?: SessionRecord,
  ) {
    super(describeRejection(rejection));
    this.name = 'IdTagRejected';
  }
}

/** a configuration key (1.6) or a component.variable (2.0.1) the central system can read and maybe set */
export interface Setting {
  value: string;
  readonly: boolean;
}

/**
 * UTC timestamp; whole seconds are sent without milliseconds (as most chargers do), live readings keep theirs
 * so that two readings within one second never look like an instantaneous jump
 */
export function iso(d: Date): string {
  return d.toISOString().replace(/\.000Z$/, 'Z');
}

/**
 * The sleepers waiting on each abort signal. A fleet's chargers all sleep on the fleet's one signal: a listener
 * each would make every sleep O(n) (an EventTarget looks through its listeners for a duplicate on every add), so
 * each signal gets one listener that wakes all its sleepers.
 */
const sleepers = new WeakMap<AbortSignal, Set<() => void>>();

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (!signal) {
      setTimeout(resolve, ms);
      return;
    }
    if (signal.aborted) return resolve();
    let waiting = sleepers.get(signal);
    if (!waiting) {
      const set = new Set<() => void>();
      sleepers.set(signal, set);
      signal.addEventListener('abort', () => {
        for (const wake of set) wake();
        set.clear();
      }, { once: true });
      waiting = set;
    }
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      waiting.delete(onAbort);
      resolve();
    }, ms);
    waiting.add(onAbort);
  });
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

/** how an energy register reading is written under the charger's quirks: in kWh or Wh, labelled how, per phase? */
export interface EnergyFormat {
  kwh: boolean;
  label: 'Wh' | 'kWh';
  values: Array<{ v: number; phase?: string }>;
}

export function energyFormat(wh: number, quirks: readonly Quirk[]): EnergyFormat {
  const kwhAsWh = quirks.includes('kwh-as-wh');
  const whAsKwh = quirks.includes('wh-as-kwh');
  const kwh = quirks.includes('kwh') || kwhAsWh;
  const label = whAsKwh ? 'kWh' : kwhAsWh ? 'Wh' : kwh ? 'kWh' : 'Wh';
  const values = quirks.includes('phases') ? splitPhases(wh).map((v, i) => ({ v, phase: `L${i + 1}` })) : [{ v: wh }];
  return { kwh, label, values };
}
