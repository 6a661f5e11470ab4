// The fleet of one benchmark run, driven from several processes when it is too big for one: a process opens at
// most about 20,000 files here, and one source address has about 28,000 ephemeral ports towards one server port.
// Each driver process gets a slice of the chargers, its own share of the message rate and the ramp, and its own
// source address in 127.0.0.0/8; their summaries are merged into one (latency percentiles from the merged samples).
import fs from 'node:fs';
import path from 'node:path';
import type { FleetSummary } from '../simulator/load.ts';
import { percentile } from '../simulator/stats.ts';

/** Chargers one driver process holds at most (its file limit and one source address's ports, with room). */
export const MAX_PER_DRIVER = 12_500;

export function driverCount(chargers: number, asked: number | undefined): number {
  return Math.max(asked ?? 1, Math.ceil(chargers / MAX_PER_DRIVER));
}

/** The source address of driver d: 127.0.0.1 for a lone driver, else 127.0.0.(2 + d). */
export function sourceAddress(d: number, drivers: number): string | undefined {
  return drivers === 1 ? undefined : `127.0.0.${2 + d}`;
}

/** Splits an identity,password CSV into `drivers` files of about equal size next to it. */
export function splitCsv(csv: string, drivers: number): string[] {
  if (drivers === 1) return [csv];
  const [header, ...lines] = fs.readFileSync(csv, 'utf8').split('\n').filter((l) => l.length > 0);
  const per = Math.ceil(lines.length / drivers);
  return Array.from({ length: drivers }, (_, d) => {
    const file = path.join(path.dirname(csv), `chargers-${d}.csv`);
    fs.writeFileSync(file, [header, ...lines.slice(d * per, (d + 1) * per)].join('\n') + '\n');
    return file;
  });
}

/** n split over `parts` whole shares that add up to n (at least 1 each when n > 0). */
export function share(n: number, parts: number, d: number): number {
  const base = Math.floor(n / parts);
  return Math.max(n > 0 ? 1 : 0, base + (d < n % parts ? 1 : 0));
}

const round = (v: number | null) => (v === null ? null : Math.round(v * 100) / 100);

/** One line on the MeterValues acknowledged before the steady window (the start burst) and after it (the stop burst). */
export function formatOutside(outside: FleetSummary['meter_values_latency_outside_sample']): string {
  const part = (xs: number[], what: string) => {
    if (xs.length === 0) return `none ${what}`;
    const sorted = [...xs].sort((a, b) => a - b);
    return `${sorted.length} ${what}, p50 ${round(percentile(sorted, 50))} / p99 ${round(percentile(sorted, 99))} / max ${round(sorted[sorted.length - 1]!)} ms`;
  };
  return `${part(outside.before, 'before it (the start burst)')}; ${part(outside.after, 'after it (its last second and the stop burst)')}`;
}

/** One summary of the whole fleet from the summaries of its driver processes. */
export function mergeSummaries(parts: FleetSummary[]): FleetSummary {
  if (parts.length === 1) return parts[0]!;
  const sum = (f: (s: FleetSummary) => number) => parts.reduce((a, s) => a + f(s), 0);
  const max = (f: (s: FleetSummary) => number | null | undefined) =>
    parts.reduce<number | null>((a, s) => {
      const v = f(s);
      return v == null ? a : a === null ? v : Math.max(a, v);
    }, null);
  const sample = parts.flatMap((s) => s.meter_values_latency_sample).sort((a, b) => a - b);
  const steady = parts.flatMap((s) => s.meter_values_latency_steady_sample).sort((a, b) => a - b);
  const storms = parts.map((s) => s.storm).filter((s): s is NonNullable<FleetSummary['storm']> => s !== undefined);
  const first = parts[0]!;
  return {
    ...first,
    count: sum((s) => s.count),
    connected_peak: sum((s) => s.connected_peak),
    booted: sum((s) => s.booted),
    connect_failures: sum((s) => s.connect_failures),
    ramp_s: max((s) => s.ramp_s) ?? 0,
    workload_s: max((s) => s.workload_s) ?? 0,
    messages: {
      connected: sum((s) => s.messages.connected),
      booted: sum((s) => s.messages.booted),
      sent: sum((s) => s.messages.sent),
      acked: sum((s) => s.messages.acked),
      errors: sum((s) => s.messages.errors),
      meter_values_acked: sum((s) => s.messages.meter_values_acked),
      queued: sum((s) => s.messages.queued),
      // every message's latencies are sampled per process; the fleet's p50/p99 is the worst driver's (an upper bound)
      ack_latency_ms: {
        p50: max((s) => s.messages.ack_latency_ms.p50),
        p99: max((s) => s.messages.ack_latency_ms.p99),
        max: max((s) => s.messages.ack_latency_ms.max),
        samples: sum((s) => s.messages.ack_latency_ms.samples),
      },
    },
    meter_values_acked_in_workload: sum((s) => s.meter_values_acked_in_workload),
    meter_values_per_second: Math.round(sum((s) => s.meter_values_per_second) * 10) / 10,
    meter_values_ack_latency_ms: { p50: round(percentile(sample, 50)), p99: round(percentile(sample, 99)), samples: sample.length },
    meter_values_latency_sample: [],
    meter_values_ack_latency_steady_ms: { p50: round(percentile(steady, 50)), p99: round(percentile(steady, 99)), samples: steady.length },
    meter_values_latency_steady_sample: [],
    meter_values_latency_outside_sample: {
      before: parts.flatMap((s) => s.meter_values_latency_outside_sample.before),
      after: parts.flatMap((s) => s.meter_values_latency_outside_sample.after),
    },
    driver_loop_delay_steady_ms: parts.some((s) => s.driver_loop_delay_steady_ms)
      ? { p99: max((s) => s.driver_loop_delay_steady_ms?.p99) ?? 0, max: max((s) => s.driver_loop_delay_steady_ms?.max) ?? 0 }
      : null,
    energy_wh: sum((s) => s.energy_wh),
    periodic_acked: {
      count: sum((s) => s.periodic_acked.count),
      wh_sum: parts.reduce((a, s) => a + BigInt(s.periodic_acked.wh_sum), 0n).toString(),
    },
    ...(storms.length > 0
      ? {
          storm: {
            dropped: storms.reduce((a, s) => a + s.dropped, 0),
            rebooted: storms.reduce((a, s) => a + s.rebooted, 0),
            failed: storms.reduce((a, s) => a + s.failed, 0),
            reconnect_boot_ms: Math.max(...storms.map((s) => s.reconnect_boot_ms)),
            p50_ms: Math.max(...storms.map((s) => s.p50_ms ?? 0)),
            p99_ms: Math.max(...storms.map((s) => s.p99_ms ?? 0)),
          },
        }
      : {}),
    errors: parts.flatMap((s) => s.errors).slice(0, 20),
  };
}
