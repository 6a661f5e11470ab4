// Session plans: what a charger will deliver, fixed up front (seeded), so the same sessions can be replayed
// cleanly, offline or with quirks and the totals compared. All energy is integer Wh.
import { iso, type ChargePoint, type SessionRecord } from '../charge-point.ts';

export interface PlannedSession {
  connectorId: number;
  idTag: string;
  start: Date;
  durationS: number;
  energyWh: number;
  powerW: number;
  meterIntervalS: number;
}

/** mulberry32: a small deterministic PRNG */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function seedFrom(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

export interface SingleSessionParams {
  energyWh?: number;
  powerW?: number;
  durationS?: number;
  meterIntervalS?: number;
  connectorId?: number;
  idTag?: string;
  /** when the session starts; default: so that it ends now */
  start?: Date;
  now?: Date;
}

/** one session: energy from power × duration when not given, duration from energy / power when not given */
export function singleSession(p: SingleSessionParams = {}): PlannedSession {
  const powerW = p.powerW ?? 7400;
  let energyWh = p.energyWh;
  let durationS = p.durationS;
  if (energyWh === undefined && durationS === undefined) energyWh = 10_000;
  if (durationS === undefined) durationS = Math.max(60, Math.ceil(((energyWh ?? 0) * 3600) / powerW));
  if (energyWh === undefined) energyWh = Math.floor((powerW * durationS) / 3600);
  const now = p.now ?? new Date();
  const start = p.start ?? new Date(Math.floor(now.getTime() / 1000) * 1000 - durationS * 1000 - 60_000);
  return {
    connectorId: p.connectorId ?? 1,
    idTag: p.idTag ?? 'SIMTAG01',
    start,
    durationS,
    energyWh,
    powerW,
    meterIntervalS: p.meterIntervalS ?? 60,
  };
}

export interface MonthParams {
  /** YYYY-MM (UTC calendar month); default: the previous month */
  month?: string;
  seed?: number;
  /** sessions in the month; default 18–26 (seeded) */
  sessions?: number;
  meterIntervalS?: number;
  connectors?: number;
  /** the id tag every session is started with; default SIMTAG01 */
  idTag?: string;
  now?: Date;
}

/** YYYY-MM with a month 01–12, or undefined */
export function parseMonth(month: string): { year: number; month: number } | undefined {
  const m = /^(\d{4})-(0[1-9]|1[0-2])$/.exec(month);
  return m ? { year: Number(m[1]), month: Number(m[2]) } : undefined;
}

export function previousMonth(now = new Date()): string {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/**
 * A month of home charging: an evening plug-in on most days (arrival 16:00–20:00 UTC), 4–40 kWh at
 * 3.7/7.4/11 kW, never overlapping, all inside the month and before `now`.
 */
export function monthPlan(p: MonthParams = {}): PlannedSession[] {
  const month = p.month ?? previousMonth(p.now);
  const m = parseMonth(month);
  if (!m) throw new Error(`--month must be YYYY-MM (month 01–12), got ${month}`);
  const year = m.year;
  const mon = m.month - 1;
  const days = new Date(Date.UTC(year, mon + 1, 0)).getUTCDate();
  const rand = rng(p.seed ?? seedFrom(month));
  const wanted = p.sessions ?? 18 + Math.floor(rand() * 9);
  const chosen = new Set<number>();
  const candidates = Array.from({ length: days - 1 }, (_, i) => i + 1); // leave the last day for overnight ends
  while (chosen.size < Math.min(wanted, candidates.length)) chosen.add(candidates[Math.floor(rand() * candidates.length)]!);
  const powers = [3700, 7400, 7400, 11000];
  const limit = (p.now ?? new Date()).getTime();
  const out: PlannedSession[] = [];
  for (const day of [...chosen].sort((a, b) => a - b)) {
    const powerW = powers[Math.floor(rand() * powers.length)]!;
    const energyWh = 4000 + Math.floor(rand() * 36_000);
    const durationS = Math.ceil((energyWh * 3600) / powerW) + Math.floor(rand() * 1800);
    const startMin = 16 * 60 + Math.floor(rand() * 240);
    const start = new Date(Date.UTC(year, mon, day, 0, startMin, Math.floor(rand() * 60)));
    if (start.getTime() + durationS * 1000 > limit) continue;
    out.push({
      connectorId: 1 + Math.floor(rand() * (p.connectors ?? 1)),
      idTag: p.idTag ?? 'SIMTAG01',
      start,
      durationS,
      energyWh,
      powerW,
      meterIntervalS: p.meterIntervalS ?? 900,
    });
  }
  return out;
}

/** a few sessions on the days before `now` (the offline and quirks scenarios' default) */
export function recentPlan(p: { sessions?: number; seed?: number; meterIntervalS?: number; idTag?: string; now?: Date } = {}): PlannedSession[] {
  const n = p.sessions ?? 4;
  const rand = rng(p.seed ?? 42);
  const now = p.now ?? new Date();
  const dayMs = 86_400_000;
  const today = Math.floor(now.getTime() / dayMs) * dayMs;
  const out: PlannedSession[] = [];
  for (let i = n; i >= 1; i--) {
    const powerW = [3700, 7400, 11000][Math.floor(rand() * 3)]!;
    const energyWh = 3000 + Math.floor(rand() * 20_000);
    const durationS = Math.ceil((energyWh * 3600) / powerW);
    const start = new Date(today - i * dayMs + (17 * 60 + Math.floor(rand() * 120)) * 60_000);
    out.push({ connectorId: 1, idTag: p.idTag ?? 'SIMTAG01', start, durationS, energyWh, powerW, meterIntervalS: p.meterIntervalS ?? 600 });
  }
  return out;
}

/**
 * Play one planned session with its own timestamps, as fast as the central system acknowledges:
 * Preparing → Authorize → start → Charging → readings every meter interval → stop → Finishing → Available.
 * Offline (not connected), status and Authorize are skipped and the transaction messages are queued.
 * An id tag the central system rejects throws IdTagRejected (Authorize: nothing started; the start's answer: the
 * transaction stopped a second later with reason DeAuthorized).
 */
export async function playSession(cp: ChargePoint, s: PlannedSession): Promise<SessionRecord> {
  const t0 = s.start.getTime();
  const at = (sec: number) => new Date(t0 + sec * 1000);
  await cp.statusNotification(s.connectorId, 'Preparing', at(0));
  // a tag the central system does not accept: no transaction (Authorize), or one stopped at once (the start's answer)
  await cp.authorizeStart(s.connectorId, s.idTag, at(0), at(30));
  const tx = await cp.beginTx({ connectorId: s.connectorId, idTag: s.idTag, at: at(0) });
  await cp.stopIfDeauthorized(tx, at(1), at(31));
  await cp.statusNotification(s.connectorId, 'Charging', at(0));
  const startWh = tx.meterStartWh;
  let lastSec = 0;
  for (let sec = s.meterIntervalS; sec < s.durationS; sec += s.meterIntervalS) {
    if (cp.interrupted) {
      // the run is being stopped: the charger stops the transaction at its last reading, as on a local stop
      const record = await cp.endTx(tx, tx.lastWh, at(lastSec), 'Local');
      await cp.statusNotification(s.connectorId, 'Finishing', at(lastSec));
      await cp.statusNotification(s.connectorId, 'Available', at(lastSec + 30));
      return record;
    }
    const wh = startWh + Math.floor((s.energyWh * sec) / s.durationS);
    await cp.txMeter(tx, wh, at(sec), s.powerW);
    lastSec = sec;
  }
  const record = await cp.endTx(tx, startWh + s.energyWh, at(s.durationS), 'Local');
  await cp.statusNotification(s.connectorId, 'Finishing', at(s.durationS));
  await cp.statusNotification(s.connectorId, 'Available', at(s.durationS + 30));
  return record;
}

export function describe(s: PlannedSession): string {
  return `${iso(s.start)} connector ${s.connectorId}: ${s.energyWh} Wh in ${Math.round(s.durationS / 60)} min at ${s.powerW} W`;
}
