// C4.5 for both versions: MeterValue[] → integer-Wh register readings. Only the energy import register is kept:
// the phase-less total, or the sum of L1–L3 when only phases are sent; kWh converted, 2.0.1 multiplier applied,
// fractional Wh rounded (counted); signed values kept verbatim beside the reading. C4.11: an unreadable sampled
// value (bad number, unknown measurand, out of range) is set aside on the Reader with its reason, and a signed
// value without a plain one is returned apart, to be placed on the reading with its timestamp. C5.5: the
// Power.Active.Import of the same meter value rides along on the reading (powerW), as evidence for a hold.
import type { EnergyReading, SignedValue } from '../domain/charging/events.ts';
import { ENERGY_REGISTER } from '../domain/charging/readings.ts';
import { divRound } from '../lib/decimal.ts';
import { nestsDeeperThan } from '../lib/json-depth.ts';
import { type Reader, Unusable } from './tolerant.ts';

/** a signedMeterValue is an object of strings; deeper nesting is not kept (JSON.stringify would recurse into it) */
const MAX_SIGNED_DEPTH = 4;

/**
 * Every measurand of OCPP 1.6's and 2.0.1's enumerations (the OCA schemas bundled with ocpp-rpc; D257): each is read,
 * and all but the energy import register are then ignored. One missing here made a valid value unreadable, set aside
 * into the quarantine on every meter value (reactive and apparent energy, reactive power).
 */
const MEASURANDS = [
  'Energy.Active.Import.Register', 'Energy.Active.Export.Register', 'Energy.Reactive.Import.Register',
  'Energy.Reactive.Export.Register', 'Energy.Active.Import.Interval', 'Energy.Active.Export.Interval',
  'Energy.Reactive.Import.Interval', 'Energy.Reactive.Export.Interval', 'Energy.Active.Net', 'Energy.Reactive.Net',
  'Energy.Apparent.Net', 'Energy.Apparent.Import', 'Energy.Apparent.Export',
  'Power.Active.Import', 'Power.Active.Export', 'Power.Reactive.Import', 'Power.Reactive.Export', 'Power.Offered',
  'Power.Factor', 'Current.Import', 'Current.Export', 'Current.Offered', 'Voltage', 'Frequency', 'Temperature', 'SoC',
  'RPM',
] as const;
const PHASES = ['L1', 'L2', 'L3', 'N', 'L1-N', 'L2-N', 'L3-N', 'L1-L2', 'L2-L3', 'L3-L1'] as const;
const ENERGY_UNITS = ['Wh', 'kWh'] as const;
/** C4.10: 2.0.1 unitOfMeasure.multiplier is a power of ten in −3…6 */
const MULTIPLIER_MIN = -3;
const MULTIPLIER_MAX = 6;

export type Version = 'ocpp1.6' | 'ocpp2.0.1';

/**
 * Where a sampled value was measured (OCPP `location`, both versions; `Outlet` when absent), as a rank: the lower,
 * the nearer the connector's meter. A meter value may carry the same register from several places (the connector's
 * meter and the charger's grid inlet, or the vehicle's own figure); its reading is taken from the nearest one sent.
 * Inlet and body measure the whole charger, its own consumption and other connectors included. `EV` is the
 * vehicle's figure, not a meter of the charger: never a reading. An unknown label is read as the default.
 * Ranks: Outlet 0, Cable 1, Inlet 2, Body 3.
 */
const EV = -1;

function locationRank(raw: unknown): number {
  // the common case, the default spelled as OCPP spells it, without making two strings on every sampled value
  if (typeof raw !== 'string' || raw === 'Outlet') return 0;
  // a switch, not a lookup in an object: a charger's text such as "constructor" must not find a property of it
  switch (raw.trim().toLowerCase()) {
    case 'ev':
      return EV;
    case 'cable':
      return 1;
    case 'inlet':
      return 2;
    case 'body':
      return 3;
    default:
      return 0; // Outlet, and any label OCPP does not have
  }
}

interface Sample {
  /** locationRank of the sampled value */
  rank: number;
  phase: string;
  /** null: a signed value only (1.6 format SignedData) */
  wh: bigint | null;
  signed: string | null;
  context: string | null;
}

function multiplierOf(r: Reader, raw: unknown): number {
  if (raw === undefined || raw === null) return 0;
  let n: number | null = null;
  if (typeof raw === 'number') n = raw;
  else if (typeof raw === 'string' && /^\s*[+-]?\d{1,2}\s*$/.test(raw)) {
    r.quirk('number_as_string');
    n = Number(raw);
  }
  if (n === null || !Number.isInteger(n) || n < MULTIPLIER_MIN || n > MULTIPLIER_MAX) {
    throw new Unusable(`multiplier must be an integer in ${MULTIPLIER_MIN}…${MULTIPLIER_MAX}`);
  }
  return n;
}

function readSample(r: Reader, v: Version, sv: Record<string, unknown>): Sample | null {
  const measurand = sv.measurand === undefined ? ENERGY_REGISTER : r.enumOf(MEASURANDS, sv.measurand, 'measurand');
  if (measurand !== ENERGY_REGISTER) return null;
  const rank = locationRank(sv.location);
  if (rank === EV) {
    r.quirk('location_ignored');
    return null;
  }
  const phaseRaw = sv.phase === undefined || sv.phase === '' ? null : r.enumOf(PHASES, sv.phase, 'phase');
  // D180: the phase as sent (L1 or L1-N: two forms, never mixed in one sum); neutral and line-to-line are no phase's energy
  const phase = phaseRaw ?? '';
  if (phase === 'N' || (phase.includes('-') && !phase.endsWith('-N'))) return null;
  const context = r.str(sv.context, 'context');
  if (v === 'ocpp1.6') {
    const format = sv.format === undefined ? 'Raw' : r.enumOf(['Raw', 'SignedData'] as const, sv.format, 'format');
    if (format === 'SignedData') return { rank, phase, wh: null, signed: r.str(sv.value, 'value', true), context };
  }
  const uom = v === 'ocpp2.0.1' && sv.unitOfMeasure !== undefined ? r.obj(sv.unitOfMeasure, 'unitOfMeasure') : undefined;
  const unitRaw = v === 'ocpp1.6' ? sv.unit : uom?.unit;
  const unit = unitRaw === undefined ? 'Wh' : r.enumOf(ENERGY_UNITS, unitRaw, 'unit');
  // C4.10: the multiplier is bounded before it becomes a power of ten (2000000 froze the event loop)
  const multiplier = multiplierOf(r, uom?.multiplier);
  // value at scale 6 (1e-6 of the unit), bounded to 15 significant digits below 10^15, then to Wh
  let units = r.decimal(sv.value, 'value');
  const exp = (unit === 'kWh' ? 3 : 0) + multiplier;
  if (exp > 0) units *= 10n ** BigInt(exp);
  else if (exp < 0) units = divRound(units, 10n ** BigInt(-exp));
  const wh = r.boundedWh(units, 'value', unit === 'Wh');
  // D182: a register counts up from zero; a negative one is no reading (set aside, as other unreadable values)
  if (wh < 0n) throw new Unusable('value is a negative register value');
  // kept verbatim as JSON; a real one is a flat object of four strings, so anything nested deep is not one
  if (v === 'ocpp2.0.1' && sv.signedMeterValue !== undefined && nestsDeeperThan(sv.signedMeterValue, MAX_SIGNED_DEPTH)) {
    throw new Unusable('signedMeterValue is nested too deep');
  }
  const sm = v === 'ocpp2.0.1' && sv.signedMeterValue !== undefined ? JSON.stringify(sv.signedMeterValue) : null;
  return { rank, phase, wh, signed: sm, context };
}

const POWER = 'Power.Active.Import';
/** a power reading above 1 GW is no charger's */
const MAX_POWER_W = 1e9;

/**
 * C5.5: the import power of a sampled value in W (W or kW, 2.0.1 multiplier applied), or null. Power is evidence
 * for a hold (register_too_slow), not energy: it is read leniently and an unreadable one is ignored, never set aside.
 */
function powerOf(v: Version, sv: Record<string, unknown>): { phase: string; w: number } | null {
  if (typeof sv.measurand !== 'string' || sv.measurand.trim().toLowerCase() !== POWER.toLowerCase()) return null;
  if (v === 'ocpp1.6' && sv.format !== undefined && sv.format !== 'Raw') return null;
  if (locationRank(sv.location) === EV) return null;
  const uom = v === 'ocpp2.0.1' && typeof sv.unitOfMeasure === 'object' && sv.unitOfMeasure !== null ? (sv.unitOfMeasure as Record<string, unknown>) : {};
  const unit = String((v === 'ocpp1.6' ? sv.unit : uom.unit) ?? 'W').trim().toLowerCase();
  const multiplier = uom.multiplier === undefined ? 0 : Number(uom.multiplier);
  if ((unit !== 'w' && unit !== 'kw') || !Number.isInteger(multiplier) || multiplier < MULTIPLIER_MIN || multiplier > MULTIPLIER_MAX) return null;
  const value = typeof sv.value === 'number' || (typeof sv.value === 'string' && /^\s*[+-]?\d+(\.\d+)?\s*$/.test(sv.value)) ? Number(sv.value) : NaN;
  const w = Math.round(value * 10 ** ((unit === 'kw' ? 3 : 0) + multiplier));
  if (!Number.isFinite(w) || w < 0 || w > MAX_POWER_W) return null;
  const phase = typeof sv.phase === 'string' ? sv.phase.replace(/-N$/, '') : '';
  if (phase !== '' && phase !== 'L1' && phase !== 'L2' && phase !== 'L3') return null;
  return { phase, w };
}

/** The phase-less power, else the sum of the phases' (undefined when none was sent). */
function totalPower(powers: Array<{ phase: string; w: number }>): number | undefined {
  const total = powers.find((p) => p.phase === '');
  if (total) return total.w;
  const byPhase = new Map<string, number>();
  for (const p of powers) if (!byPhase.has(p.phase)) byPhase.set(p.phase, p.w);
  return byPhase.size > 0 ? [...byPhase.values()].reduce((a, b) => a + b, 0) : undefined;
}

/** D180: the phases that make a total: all three, of one form (L1, L2, L3 or L1-N, L2-N, L3-N). */
const PHASE_FORMS = [
  ['L1', 'L2', 'L3'],
  ['L1-N', 'L2-N', 'L3-N'],
] as const;

/**
 * C4.5, D180: the total of a meter value that carries only phase registers: the sum of L1, L2 and L3 when all three
 * are there in one form (the plain form first), else null (no register reading: two phases of three summed were a
 * register a third short, which then went "backwards" and counted its recovery in full).
 */
function phaseSum(samples: Sample[]): bigint | null {
  // D206: a single-phase meter reports its register on L1 alone: that is its total (a home charger on one phase)
  const phased = samples.filter((s) => s.phase !== '' && s.wh !== null);
  if (phased.length > 0 && phased.every((s) => s.phase === 'L1' || s.phase === 'L1-N')) return phased[0]!.wh;
  for (const form of PHASE_FORMS) {
    const values = form.map((ph) => samples.find((s) => s.phase === ph && s.wh !== null)?.wh);
    if (values.every((v) => v !== undefined && v !== null)) return (values as bigint[]).reduce((a, b) => a + b, 0n);
  }
  return null;
}

/** The register readings of a MeterValue[] and the signed values that came without a plain value. */
export interface MeterValuesRead {
  readings: EnergyReading[];
  signed: SignedValue[];
}

const looksLikeEnergy = (sv: unknown) => {
  const m = (sv as Record<string, unknown> | null)?.measurand;
  return m === undefined || (typeof m === 'string' && m.trim().toLowerCase() === ENERGY_REGISTER.toLowerCase());
};

/** MeterValue[] → readings. What cannot be read is set aside on the Reader (r.aside), never thrown. */
export function readMeterValues(r: Reader, v: Version, meterValues: unknown, contextDefault = 'Sample.Periodic'): MeterValuesRead {
  const out: MeterValuesRead = { readings: [], signed: [] };
  if (meterValues !== undefined && meterValues !== null && !Array.isArray(meterValues)) {
    r.aside.push({ reason: 'meterValue must be an array', part: meterValues });
    return out;
  }
  for (const mvRaw of (meterValues ?? []) as unknown[]) {
    let measuredAt: Date;
    let sampled: unknown[];
    try {
      const mv = r.obj(mvRaw, 'meterValue');
      measuredAt = r.time(mv.timestamp, 'meterValue.timestamp');
      sampled = r.arr(mv.sampledValue, 'sampledValue');
    } catch (err) {
      if (!(err instanceof Unusable)) throw err;
      r.aside.push({ reason: err.message, part: mvRaw });
      continue;
    }
    const timestamp = (mvRaw as Record<string, unknown>).timestamp;
    let samples: Sample[] = [];
    const powers: Array<{ phase: string; w: number }> = [];
    /** the nearest location of an energy value that could not be read (none: Infinity) */
    let lostRank = Infinity;
    for (const raw of sampled) {
      try {
        const sv = r.obj(raw, 'sampledValue');
        const s = readSample(r, v, sv);
        if (s) samples.push(s);
        else {
          const p = powerOf(v, sv);
          if (p) powers.push(p);
        }
      } catch (err) {
        if (!(err instanceof Unusable)) throw err;
        if (looksLikeEnergy(raw)) {
          const rank = locationRank((raw as Record<string, unknown> | null)?.location);
          if (rank !== EV) lostRank = Math.min(lostRank, rank);
        }
        r.aside.push({ reason: err.message, part: { timestamp, sampledValue: [raw] } });
      }
    }
    if (samples.length === 0) continue;
    // the register of the place nearest the connector's meter that was sent (LOCATION_RANK); the others are not
    // read, and when the nearest one's value was unreadable (set aside above) a farther one does not stand in for it
    let nearest = lostRank;
    for (const x of samples) if (x.rank < nearest) nearest = x.rank;
    if (samples.some((x) => x.rank !== nearest)) {
      r.quirk('location_ignored');
      samples = samples.filter((x) => x.rank === nearest);
      if (samples.length === 0) continue;
    }
    const energyLost = lostRank === nearest;
    const signed = samples.find((s) => s.signed !== null)?.signed ?? null;
    const context = samples.find((s) => s.context !== null)?.context ?? contextDefault;
    let wh: bigint | null = samples.find((s) => s.phase === '' && s.wh !== null)?.wh ?? null;
    if (wh === null && !energyLost) {
      // only phases: their sum, unless an energy value of this meter value was unreadable (the sum would be short)
      wh = phaseSum(samples);
      if (wh !== null) r.quirk('phase_sum');
      else if (samples.some((s) => s.phase !== '' && s.wh !== null)) r.quirk('phases_incomplete');
    }
    const powerW = totalPower(powers);
    if (wh !== null) out.readings.push({ measuredAt, measurand: ENERGY_REGISTER, phase: '', wh, context, signedData: signed, ...(powerW !== undefined ? { powerW } : {}) });
    else if (signed !== null) {
      // C4.5: signed data alone belongs to the register reading with its timestamp (placed by the domain)
      out.signed.push({ measuredAt, signedData: signed, part: mvRaw });
    } else if (energyLost) {
      r.aside.push({ reason: 'the phase values cannot be summed: one of them is unreadable', part: mvRaw });
    }
  }
  return out;
}

/** C4.11: a message whose meter values were all set aside carries nothing usable: it is quarantined whole. */
export function nothingUsable(r: Reader, read: MeterValuesRead): boolean {
  return read.readings.length === 0 && read.signed.length === 0 && r.aside.length > 0;
}

/** The reasons of the parts set aside, for the quarantine of a whole message. */
export function asideReasons(r: Reader): string {
  const reasons = [...new Set(r.aside.map((a) => a.reason))];
  return reasons.slice(0, 5).join('; ') + (reasons.length > 5 ? `; and ${reasons.length - 5} more` : '');
}
