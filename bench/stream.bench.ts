// `npm run bench:stream -- [--chargers 100] [--interval 2] [--duration 30] [--streams 3]`
//
// How soon an owner's push stream (GET /chargers/stream, C7.1: "within 1 s of the change being committed, whichever
// process holds the socket") shows a charger's reading: two service processes on one fresh PostgreSQL database
// (DATABASE_URL required); the chargers connect to process A and each sends a MeterValues every `interval` seconds
// in a running transaction; the owner's streams are open on process B. For every reading the time from its
// acknowledgement (it is committed by then, C4.11) to the first `charger` event on each stream whose
// `latest_meter_wh` has reached it (negative when the event came before the charger's answer). Prints p50/p90/p99/max
// per stream and overall, and the readings never shown.
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { RPCClient } from 'ocpp-rpc';
import { connectOwnedCharger } from '../test/helpers/service-process.ts';
import { percentile, runBench, withTwoServices } from './bench-service.ts';

const { values: a } = parseArgs({
  options: {
    chargers: { type: 'string', default: '100' },
    interval: { type: 'string', default: '2' },
    duration: { type: 'string', default: '30' },
    streams: { type: 'string', default: '3' },
    json: { type: 'boolean', default: false },
  },
});
const base = process.env.DATABASE_URL;
if (!base) {
  process.stderr.write('bench:stream needs DATABASE_URL (two processes share one PostgreSQL)\n');
  process.exit(2);
}
const streamsWanted = Number(a.streams);
if (!(streamsWanted >= 1 && streamsWanted <= 5)) {
  process.stderr.write('--streams is 1 to 5 (C7.1: at most 5 open streams per token)\n');
  process.exit(2);
}

const r1 = (v: number) => Math.round(v * 10) / 10;
const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

/** One open push stream: for each charger, the readings acknowledged and not yet shown on it (Wh → ack time). */
class StreamWatch {
  readonly latencies: number[] = [];
  private readonly pending = new Map<string, Array<{ wh: number; ackAt: number }>>();
  /** per charger: the latest register a `charger` event showed, and when */
  private readonly shown = new Map<string, { wh: number; at: number }>();
  private readonly abort = new AbortController();
  private done: Promise<void> = Promise.resolve();

  async open(url: string, token: string): Promise<void> {
    const res = await fetch(`${url}/chargers/stream`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' }, signal: this.abort.signal });
    if (res.status !== 200 || !res.body) throw new Error(`the stream answered ${res.status}`);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    this.done = (async () => {
      let buf = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buf += value;
          let end: number;
          while ((end = buf.indexOf('\n\n')) >= 0) {
            this.onEvent(buf.slice(0, end), performance.now());
            buf = buf.slice(end + 2);
          }
        }
      } catch {
        // aborted at the end of the run
      }
    })();
  }

  expect(chargerId: string, wh: number, ackAt: number): void {
    // the event may come before the charger has its answer (the stream is told at the commit): a negative delay
    const seen = this.shown.get(chargerId);
    if (seen && seen.wh >= wh) {
      this.latencies.push(seen.at - ackAt);
      return;
    }
    let list = this.pending.get(chargerId);
    if (!list) this.pending.set(chargerId, (list = []));
    list.push({ wh, ackAt });
  }

  private onEvent(block: string, at: number): void {
    const lines = block.split('\n');
    if (!lines.includes('event: charger')) return;
    const data = lines.find((l) => l.startsWith('data: '));
    if (!data) return;
    const item = JSON.parse(data.slice(6)) as { id: string; latest_meter_wh?: number };
    if (item.latest_meter_wh === undefined) return;
    this.shown.set(item.id, { wh: item.latest_meter_wh, at });
    const list = this.pending.get(item.id);
    if (!list) return;
    // a reading is shown once the charger's latest register has reached it (the stream may fold several into one)
    let shown = 0;
    while (shown < list.length && list[shown]!.wh <= item.latest_meter_wh) {
      this.latencies.push(at - list[shown]!.ackAt);
      shown += 1;
    }
    list.splice(0, shown);
  }

  /** readings acknowledged and never shown */
  get missing(): number {
    let n = 0;
    for (const l of this.pending.values()) n += l.length;
    return n;
  }

  async close(): Promise<void> {
    this.abort.abort();
    await this.done;
  }
}

async function main(): Promise<void> {
  await withTwoServices(base!, 'stream', {}, async ({ A, B, ownerToken: token }) => {
    const clients: RPCClient[] = [];
    const watches: StreamWatch[] = [];
    try {
      const chargers: Array<{ id: string; cli: RPCClient; tx: number; wh: number }> = [];
      for (let i = 0; i < Number(a.chargers); i++) {
        const { id, cli } = await connectOwnedCharger(A.url, token, `Stream ${i}`);
        clients.push(cli);
        await cli.call('BootNotification', { chargePointVendor: 'Alfen BV', chargePointModel: 'NG910-60023' });
        const wh = 1_000_000 + i * 1000;
        const started = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'BENCH', meterStart: wh, timestamp: new Date().toISOString() })) as { transactionId: number };
        chargers.push({ id, cli, tx: started.transactionId, wh });
      }
      for (let i = 0; i < streamsWanted; i++) {
        const w = new StreamWatch();
        await w.open(B.url, token);
        watches.push(w);
      }
      await sleep(1500); // the streams' first events (every charger's current state) have passed

      const intervalMs = Number(a.interval) * 1000;
      const until = performance.now() + Number(a.duration) * 1000;
      let sent = 0;
      let failed = 0;
      // each charger on its own clock, spread over the interval
      await Promise.all(
        chargers.map(async (c, i) => {
          await sleep((i * intervalMs) / chargers.length);
          while (performance.now() < until) {
            const next = performance.now() + intervalMs;
            c.wh += 37; // 37 Wh every interval: a charger at a few kW
            const wh = c.wh;
            try {
              await c.cli.call('MeterValues', { connectorId: 1, transactionId: c.tx, meterValue: [{ timestamp: new Date().toISOString(), sampledValue: [{ value: String(wh), context: 'Sample.Periodic' }] }] });
              const ackAt = performance.now();
              for (const w of watches) w.expect(c.id, wh, ackAt);
              sent += 1;
            } catch {
              failed += 1;
            }
            await sleep(Math.max(0, next - performance.now()));
          }
        }),
      );
      await sleep(3000); // the last readings' events
      const per = watches.map((w) => {
        const s = [...w.latencies].sort((x, y) => x - y);
        return { shown: s.length, missing: w.missing, p50: r1(percentile(s, 50)), p90: r1(percentile(s, 90)), p99: r1(percentile(s, 99)), max: r1(s[s.length - 1] ?? NaN) };
      });
      const all = watches.flatMap((w) => w.latencies).sort((x, y) => x - y);
      const out = {
        machine: { nproc: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', node: process.version },
        chargers: chargers.length,
        interval_s: Number(a.interval),
        duration_s: Number(a.duration),
        readings_acked: sent,
        readings_failed: failed,
        streams: per,
        ack_to_event_ms: { p50: r1(percentile(all, 50)), p90: r1(percentile(all, 90)), p99: r1(percentile(all, 99)), max: r1(all[all.length - 1] ?? NaN) },
        never_shown: per.reduce((n, p) => n + p.missing, 0),
      };
      if (a.json) process.stdout.write(JSON.stringify(out, null, 2) + '\n');
      else
        process.stdout.write(
          `push stream (chargers on process A, ${per.length} stream(s) of their owner on process B), ${out.chargers} chargers, a MeterValues each every ${out.interval_s} s for ${out.duration_s} s:\n` +
            `  ${sent} readings acknowledged (${failed} failed); from acknowledgement to the stream's event:\n` +
            per.map((p, i) => `  stream ${i + 1}: ${p.shown} shown, ${p.missing} never shown; p50 ${p.p50} ms   p90 ${p.p90} ms   p99 ${p.p99} ms   max ${p.max} ms\n`).join('') +
            `  all: p50 ${out.ack_to_event_ms.p50} ms   p90 ${out.ack_to_event_ms.p90} ms   p99 ${out.ack_to_event_ms.p99} ms   max ${out.ack_to_event_ms.max} ms (C7.1: within 1 s)\n`,
        );
    } finally {
      await Promise.all(watches.map((w) => w.close()));
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    }
  });
}

runBench('bench:stream', main);
