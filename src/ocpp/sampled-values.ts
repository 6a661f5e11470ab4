// C4.5 for both versions: MeterValue[] → integer-Wh register readings. Only the energy import register is kept:
// the phase-less total, or the sum of L1–L3 when only phases are sent; kWh converted, 2.0.1 multiplier applied,
// fractional Wh rounded (counted); signed values kept verbatim beside the reading.
import { divRound } from '../lib/decimal.ts';
import type { EnergyReading } from '../domain/charging/events.ts';
import { ENERGY_REGISTER } from '../domain/charging/readings.ts';
import { type Reader, Unusable } from './tolerant.ts';

const MEASURANDS = [
  'Energy.Active.Import.Register', 'Energy.Active.Export.Register', 'Energy.Reactive.Import.Register',
  'Energy.Reactive.Export.Register', 'Energy.Active.Import.Interval', 'Energy.Active.Export.Interval',
  'Energy.Active.Net', 'Power.Active.Import', 'Power.Active.Export', 'Power.Offered', 'Power.Factor',
  'Current.Import', 'Current.Export', 'Current.Offered', 'Voltage', 'Frequency', 'Temperature', 'SoC', 'RPM',
] as const;
const PHASES = ['L1', 'L2', 'L3', 'N', 'L1-N', 'L2-N', 'L3-N', 'L1-L2', 'L2-L3', 'L3-L1'] as const;
const ENERGY_UNITS = ['Wh', 'kWh'] as const;

export type Version = 'ocpp1.6' | 'ocpp2.0.1';

interface Sample {
  phase: string;
  wh: bigint | null;
  signed: string | null;
  context: string | null;
}

function readSample(r: Reader, v: Version, raw: unknown): Sample | null {
  const sv = r.obj(raw, 'sampledValue');
  const measurand = sv.measurand === undefined ? ENERGY_REGISTER : r.enumOf(MEASURANDS, sv.measurand, 'measurand');
  if (measurand !== ENERGY_REGISTER) return null;
  const phaseRaw = sv.phase === undefined || sv.phase === '' ? null : r.enumOf(PHASES, sv.phase, 'phase');
  const phase = phaseRaw ? phaseRaw.replace(/-N$/, '') : '';
  if (phase === 'N' || phase.includes('-')) return null; // neutral and line-to-line are not energy of a phase
  const context = r.str(sv.context, 'context');
  if (v === 'ocpp1.6') {
    const format = sv.format === undefined ? 'Raw' : r.enumOf(['Raw', 'SignedData'] as const, sv.format, 'format');
    if (format === 'SignedData') return { phase, wh: null, signed: r.str(sv.value, 'value', true), context };
  }
  const unitRaw = v === 'ocpp1.6' ? sv.unit : (sv.unitOfMeasure as Record<string, unknown> | undefined)?.unit;
  const unit = unitRaw === undefined ? 'Wh' : r.enumOf(ENERGY_UNITS, unitRaw, 'unit');
  const multiplier = v === 'ocpp2.0.1' ? (r.int((sv.unitOfMeasure as Record<string, unknown> | undefined)?.multiplier, 'multiplier') ?? 0) : 0;
  // value at scale 6 (1e-6 of the unit), then to Wh
  let units = r.decimal(sv.value, 'value');
  const exp = (unit === 'kWh' ? 3 : 0) + multiplier;
  if (exp > 0) units *= 10n ** BigInt(exp);
  else if (exp < 0) units = divRound(units, 10n ** BigInt(-exp));
  const wh = divRound(units, 1_000_000n);
  if (unit === 'Wh' && units % 1_000_000n !== 0n) r.quirk('fractional_wh');
  const sm = v === 'ocpp2.0.1' && sv.signedMeterValue !== undefined ? JSON.stringify(sv.signedMeterValue) : null;
  return { phase, wh, signed: sm, context };
}

/** MeterValue[] → readings. A MeterValue whose register cannot be read throws Unusable. */
export function readMeterValues(r: Reader, v: Version, meterValues: unknown, contextDefault = 'Sample.Periodic'): EnergyReading[] {
  const out: EnergyReading[] = [];
  for (const mvRaw of r.arr(meterValues, 'meterValue')) {
    const mv = r.obj(mvRaw, 'meterValue');
    const measuredAt = r.time(mv.timestamp, 'meterValue.timestamp');
    const samples = r
      .arr(mv.sampledValue, 'sampledValue')
      .map((s) => readSample(r, v, s))
      .filter((s): s is Sample => s !== null);
    if (samples.length === 0) continue;
    const signed = samples.find((s) => s.signed !== null)?.signed ?? null;
    const context = samples.find((s) => s.context !== null)?.context ?? contextDefault;
    const total = samples.find((s) => s.phase === '' && s.wh !== null);
    let wh: bigint;
    if (total) wh = total.wh!;
    else {
      const byPhase = new Map<string, bigint>();
      for (const s of samples) if (s.wh !== null && s.phase && !byPhase.has(s.phase)) byPhase.set(s.phase, s.wh);
      // e.g. only a signed value: it cannot be read as Wh, so the message is quarantined verbatim
      if (byPhase.size === 0) throw new Unusable('meterValue has no readable energy register value');
      r.quirk('phase_sum');
      wh = [...byPhase.values()].reduce((a, b) => a + b, 0n);
    }
    out.push({ measuredAt, measurand: ENERGY_REGISTER, phase: '', wh, context, signedData: signed });
  }
  return out;
}
