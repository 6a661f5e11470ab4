// Scenarios (issue 5 item 2). Each builds its charge point from the options, plays its script and returns the
// energy it delivered in Wh, so a run can be checked against the central system's numbers. The charge point is
// returned still connected (except `storm`, which ends connected too) so a caller can keep using it; close it.
import {
  ChargePoint,
  describeRejection,
  IdTagRejected,
  TOTAL_PRESERVING_QUIRKS,
  type ChargePointOptions,
  type Quirk,
  type Rejection,
  type SessionRecord,
} from '../charge-point.ts';
import { monthPlan, playSession, recentPlan, singleSession, type PlannedSession } from './plan.ts';

export const SCENARIOS = ['boot', 'session', 'month', 'offline', 'quirks', 'storm'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface ScenarioParams {
  energyWh?: number;
  powerW?: number;
  durationS?: number;
  meterIntervalS?: number;
  connectorId?: number;
  idTag?: string;
  /** month: YYYY-MM */
  month?: string;
  seed?: number;
  /** number of sessions (month, offline, quirks) */
  sessions?: number;
  /** session: run in real time (live readings) instead of compressed simulated time */
  realtime?: boolean;
  /** offline: resend the first replayed MeterValues/TransactionEvent under a new message id (default true) */
  duplicate?: boolean;
  /** explicit plan (offline, quirks, month): the same sessions a clean run played */
  plan?: PlannedSession[];
  /**
   * stops the run (the CLI's SIGINT/SIGTERM): a boot retry's wait ends, a running transaction is stopped as on a
   * local stop (reason Local; a scripted one at its last reading), no further session starts; the result says
   * `interrupted`
   */
  signal?: AbortSignal;
}

export interface ScenarioResult {
  scenario: ScenarioName;
  identity: string;
  protocol: string;
  quirks: Quirk[];
  /** energy delivered, Wh: the sum of the sessions' energy */
  energyWh: number;
  sessions: SessionRecord[];
  /** storm: time from the drop to Accepted boot again */
  reconnectMs?: number;
  messages: { sent: number; acked: number; errors: number };
  /**
   * sessions the central system did not authorise (its Authorize or start answer did not accept the id tag): not
   * charged; one stopped at once (reason DeAuthorized) is in `sessions` with 0 Wh as well. Each is also in `errors`.
   */
  rejected: Rejection[];
  /** the sessions that charged (not rejected) */
  charged: number;
  errors: string[];
  /** the run was stopped before its end (ScenarioParams.signal) */
  interrupted?: boolean;
}

/** a rejected id tag ends that session, not the run */
interface Played {
  sessions: SessionRecord[];
  rejected: ScenarioResult['rejected'];
}

async function attempt(out: Played, play: () => Promise<SessionRecord>): Promise<void> {
  try {
    out.sessions.push(await play());
  } catch (err) {
    if (!(err instanceof IdTagRejected)) throw err;
    if (err.record) out.sessions.push(err.record);
    out.rejected.push(err.rejection);
  }
}

const played = (): Played => ({ sessions: [], rejected: [] });

function result(name: ScenarioName, cp: ChargePoint, p: Played, extra: Partial<ScenarioResult> = {}): ScenarioResult {
  const { sessions, rejected } = p;
  return {
    scenario: name,
    identity: cp.opts.identity,
    protocol: cp.protocol,
    quirks: [...cp.opts.quirks],
    energyWh: sessions.reduce((s, r) => s + r.energyWh, 0),
    sessions,
    messages: { sent: cp.stats.sent, acked: cp.stats.acked, errors: cp.stats.errors },
    rejected,
    charged: sessions.filter((r) => r.stopReason !== 'DeAuthorized').length,
    errors: [...cp.stats.lastErrors, ...rejected.map((r) => `${cp.opts.identity}: ${describeRejection(r)}`)],
    ...(cp.interrupted ? { interrupted: true } : {}),
    ...extra,
  };
}

/** connect and boot, unless already connected and booted (a fleet's ramp-up started every charger) */
async function ensureStarted(cp: ChargePoint): Promise<void> {
  if (cp.connected && cp.booted) return;
  await cp.start();
}

/** the plan a scenario plays (exported so a test can play the same sessions cleanly) */
export function planFor(name: ScenarioName, p: ScenarioParams = {}): PlannedSession[] {
  if (p.plan) return p.plan;
  if (name === 'session') {
    return [
      singleSession({
        ...(p.energyWh !== undefined ? { energyWh: p.energyWh } : {}),
        ...(p.powerW !== undefined ? { powerW: p.powerW } : {}),
        ...(p.durationS !== undefined ? { durationS: p.durationS } : {}),
        ...(p.meterIntervalS !== undefined ? { meterIntervalS: p.meterIntervalS } : {}),
        ...(p.connectorId !== undefined ? { connectorId: p.connectorId } : {}),
        ...(p.idTag !== undefined ? { idTag: p.idTag } : {}),
      }),
    ];
  }
  if (name === 'month') {
    return monthPlan({
      ...(p.month !== undefined ? { month: p.month } : {}),
      ...(p.seed !== undefined ? { seed: p.seed } : {}),
      ...(p.sessions !== undefined ? { sessions: p.sessions } : {}),
      ...(p.meterIntervalS !== undefined ? { meterIntervalS: p.meterIntervalS } : {}),
      ...(p.idTag !== undefined ? { idTag: p.idTag } : {}),
    });
  }
  if (name === 'offline' || name === 'quirks') {
    return recentPlan({
      ...(p.sessions !== undefined ? { sessions: p.sessions } : {}),
      ...(p.seed !== undefined ? { seed: p.seed } : {}),
      ...(p.meterIntervalS !== undefined ? { meterIntervalS: p.meterIntervalS } : {}),
      ...(p.idTag !== undefined ? { idTag: p.idTag } : {}),
    });
  }
  return [];
}

/** the quirks a `quirks` run applies when none are named: every total-preserving one the protocol allows */
export function defaultQuirks(protocol: string): Quirk[] {
  return TOTAL_PRESERVING_QUIRKS.filter((q) => !(q === 'no-subprotocol' && protocol !== 'ocpp1.6'));
}

export async function runScenario(
  name: ScenarioName,
  cpOptions: ChargePointOptions,
  params: ScenarioParams = {},
): Promise<{ result: ScenarioResult; cp: ChargePoint }> {
  const options = { ...cpOptions };
  if (name === 'quirks' && (!options.quirks || options.quirks.length === 0)) options.quirks = defaultQuirks(options.protocol);
  const cp = new ChargePoint(options);
  const signal = params.signal;
  const onAbort = () => cp.interrupt();
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) cp.interrupt();
  try {
    return { result: await playScenario(name, cp, params), cp };
  } catch (err) {
    // stopped while connecting or booting (a boot retry's wait): no session ran; the result says interrupted
    if (cp.interrupted) return { result: result(name, cp, played()), cp };
    await cp.close();
    throw err;
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
}

export async function playScenario(name: ScenarioName, cp: ChargePoint, p: ScenarioParams): Promise<ScenarioResult> {
  const out = played();
  switch (name) {
    case 'boot': {
      await ensureStarted(cp);
      await cp.heartbeat();
      return result(name, cp, out);
    }
    case 'session': {
      await ensureStarted(cp);
      if (p.realtime) {
        const s = planFor('session', p)[0]!;
        if (cp.interrupted) return result(name, cp, out);
        // --minutes: the live session lasts that long, at the power that delivers --energy in it (or at --power,
        // without an energy limit, when no energy is given); without it, it runs until --energy is delivered
        const timed = p.durationS !== undefined;
        const powerW = timed && p.energyWh !== undefined ? (p.energyWh * 3600) / p.durationS! : s.powerW;
        await attempt(out, async () => {
          const { done } = await cp.startLiveSession({
            connectorId: s.connectorId,
            idTag: s.idTag,
            powerW,
            ...(!timed || p.energyWh !== undefined ? { maxEnergyWh: s.energyWh } : {}),
          });
          if (!timed) return done;
          const timer = setTimeout(() => void cp.stopLiveSession(s.connectorId, 'EVDisconnected').catch(() => {}), (p.durationS! * 1000) / cp.opts.liveTimeScale);
          return done.finally(() => clearTimeout(timer));
        });
        return result(name, cp, out);
      }
      for (const s of planFor('session', p)) if (!cp.interrupted) await attempt(out, () => playSession(cp, s));
      return result(name, cp, out);
    }
    case 'month':
    case 'quirks': {
      await ensureStarted(cp);
      for (const s of planFor(name, p)) if (!cp.interrupted) await attempt(out, () => playSession(cp, s));
      return result(name, cp, out);
    }
    case 'offline': {
      // first session online; then the connection drops; the middle sessions happen offline and are queued;
      // on reconnect the queue is replayed in order with the original timestamps (new message ids, one of
      // them sent twice as a charger that missed the ack does); the last session online again
      const plan = planFor('offline', p);
      await ensureStarted(cp);
      const first = plan.length >= 3 ? 1 : 0;
      const lastOffline = plan.length >= 3 ? plan.length - 1 : plan.length;
      for (let i = 0; i < first && !cp.interrupted; i++) await attempt(out, () => playSession(cp, plan[i]!));
      await cp.goOffline();
      for (let i = first; i < lastOffline && !cp.interrupted; i++) await attempt(out, () => playSession(cp, plan[i]!));
      // interrupted while offline: reconnect all the same, so the queued sessions reach the central system
      await cp.goOnline(p.duplicate === false ? { boot: false } : { boot: false, duplicateFirst: cp.is16 ? 'MeterValues' : 'TransactionEvent' });
      for (let i = lastOffline; i < plan.length && !cp.interrupted; i++) await attempt(out, () => playSession(cp, plan[i]!));
      return result(name, cp, out);
    }
    case 'storm': {
      await ensureStarted(cp);
      await cp.goOffline();
      const t0 = performance.now();
      await cp.goOnline({ boot: true });
      return result(name, cp, out, { reconnectMs: Math.round(performance.now() - t0) });
    }
  }
}
