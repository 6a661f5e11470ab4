// `npm run bench:command -- [--chargers 20] [--commands 500]`
//
// Latency of an operator command to a charger held by ANOTHER process: two service processes on one fresh
// PostgreSQL database (DATABASE_URL required); the chargers connect to process A; the commands
// (TriggerMessage) are sent through process B's admin API, one after another, and timed from the HTTP request to
// its answer: B writes the command row and publishes a bus event, A executes it on the socket and writes the
// outcome, B is woken and answers. Prints p50/p90/p99/max.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { RPCClient } from 'ocpp-rpc';
import { connectOwnedCharger, startServiceProcess, type ServiceProcess } from '../test/helpers/service-process.ts';
import { freshDatabase } from './fresh-db.ts';
import { runBench } from './bench-service.ts';

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

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

async function main(): Promise<void> {
  const db = await freshDatabase(base!, 'ere_bench_cmd');
  const dirA = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-cmd-a-'));
  const dirB = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-cmd-b-'));
  const env = { DATABASE_URL: db.url, APP_ENV: 'sandbox', ADMIN_TOKEN: ADMIN, JOBS_ENABLED: 'false', LOG_LEVEL: 'warn', RATE_LIMIT_PERSONAL_PER_MIN: '100000' };
  let A: ServiceProcess | undefined;
  let B: ServiceProcess | undefined;
  const clients: RPCClient[] = [];
  try {
    A = await startServiceProcess({ ...env, DATA_DIR: dirA });
    B = await startServiceProcess({ ...env, DATA_DIR: dirB });
    const token = (JSON.parse(fs.readFileSync(path.join(dirA, 'demo-credentials.json'), 'utf8')) as { user: { token: string } }).user.token;
    const ids: string[] = [];
    for (let i = 0; i < Number(a.chargers); i++) {
      const { id, cli } = await connectOwnedCharger(A.url, token, `Cmd ${i}`, (c) => c.handle('TriggerMessage', async () => ({ status: 'Accepted' })));
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
      latency_ms: { p50: r(pct(times, 50)), p90: r(pct(times, 90)), p99: r(pct(times, 99)), max: r(times[times.length - 1] ?? 0) },
    };
    if (a.json) process.stdout.write(JSON.stringify(out, null, 2) + '\n');
    else
      process.stdout.write(
        `remote command (charger on process A, command through process B's admin API), ${out.commands} commands, ${failed} failed:\n` +
          `  p50 ${out.latency_ms.p50} ms   p90 ${out.latency_ms.p90} ms   p99 ${out.latency_ms.p99} ms   max ${out.latency_ms.max} ms\n`,
      );
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await A?.kill('SIGTERM');
    await B?.kill('SIGTERM');
    await db.drop();
    fs.rmSync(dirA, { recursive: true, force: true });
    fs.rmSync(dirB, { recursive: true, force: true });
  }
}

runBench('bench:command', main);
