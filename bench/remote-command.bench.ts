// `npm run bench:command -- [--chargers 20] [--commands 500]`
//
// Latency of an operator command to a charger held by ANOTHER process: two service processes on one fresh
// PostgreSQL database (DATABASE_URL required); the chargers connect to process A; the commands
// (TriggerMessage) are sent through process B's admin API, one after another, and timed from the HTTP request to
// its answer: B writes the command row and publishes a bus event, A executes it on the socket and writes the
// outcome, B is woken and answers. Prints p50/p90/p99/max.
import crypto from 'node:crypto';
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { RPCClient } from 'ocpp-rpc';
import { connectOwnedCharger } from '../test/helpers/service-process.ts';
import { percentile, runBench, withTwoServices } from './bench-service.ts';

const { values: a } = parseArgs({
  options: {
    chargers: { type: 'string', default: '20' },
    commands: { type: 'string', default: '500' },
    json: { type: 'boolean', default: false },
  },
});
const base = process.env.DATABASE_URL;
if (!base) {
  process.stderr.write('bench:command needs DATABASE_URL (two processes share one PostgreSQL)\n');
  process.exit(2);
}
const ADMIN = crypto.randomBytes(16).toString('hex');

async function main(): Promise<void> {
  await withTwoServices(base!, 'cmd', { ADMIN_TOKEN: ADMIN }, async ({ A, B, ownerToken }) => {
    const clients: RPCClient[] = [];
    try {
      const ids: string[] = [];
      for (let i = 0; i < Number(a.chargers); i++) {
        const { id, cli } = await connectOwnedCharger(A.url, ownerToken, `Cmd ${i}`, (c) => c.handle('TriggerMessage', async () => ({ status: 'Accepted' })));
        await cli.call('BootNotification', { chargePointVendor: 'Alfen BV', chargePointModel: 'NG910-60023' });
        clients.push(cli);
        ids.push(id);
      }
      const times: number[] = [];
      let failed = 0;
      for (let i = 0; i < Number(a.commands); i++) {
        const t0 = performance.now();
        const res = await fetch(`${B.url}/admin/chargers/${ids[i % ids.length]}/commands`, {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ action: 'TriggerMessage', payload: { requestedMessage: 'Heartbeat' } }),
        });
        await res.arrayBuffer();
        if (res.status === 200) times.push(performance.now() - t0);
        else failed += 1;
      }
      times.sort((x, y) => x - y);
      const r = (v: number) => Math.round(v * 10) / 10;
      const out = {
        machine: { nproc: os.cpus().length, cpu: os.cpus()[0]?.model ?? 'unknown', node: process.version },
        chargers: ids.length,
        commands: times.length,
        failed,
        latency_ms: { p50: r(percentile(times, 50)), p90: r(percentile(times, 90)), p99: r(percentile(times, 99)), max: r(times[times.length - 1] ?? 0) },
      };
      if (a.json) process.stdout.write(JSON.stringify(out, null, 2) + '\n');
      else
        process.stdout.write(
          `remote command (charger on process A, command through process B's admin API), ${out.commands} commands, ${failed} failed:\n` +
            `  p50 ${out.latency_ms.p50} ms   p90 ${out.latency_ms.p90} ms   p99 ${out.latency_ms.p99} ms   max ${out.latency_ms.max} ms\n`,
        );
    } finally {
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    }
  });
}

runBench('bench:command', main);
