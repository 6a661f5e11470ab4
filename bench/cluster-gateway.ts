// The gateway as production runs it with WORKERS=N (node:cluster, src/cluster.ts): `node src/main.ts` started as
// its own process tree on a database the benchmark prepared. CPU and RSS are those of the whole tree (primary and
// workers), read from /proc; the workers' memory is not garbage-collected first (no --expose-gc across a cluster).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startNodeFlags } from './start-flags.ts';

const TICK_US = 10_000; // CLK_TCK = 100 on Linux

function childrenOf(pid: number): number[] {
  try {
    const direct = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return direct ? direct.split(/\s+/).map(Number) : [];
  } catch {
    return fs
      .readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
        } catch {
          return false;
        }
      })
      .map(Number);
  }
}

function treeOf(pid: number): number[] {
  return [pid, ...childrenOf(pid).flatMap(treeOf)];
}

/** user + system CPU of a process and all its descendants, µs */
export function treeCpuUs(pid: number): number {
  let ticks = 0;
  for (const p of treeOf(pid)) {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(f[11]) + Number(f[12]); // utime, stime (fields 14 and 15)
    } catch {
      /* gone */
    }
  }
  return ticks * TICK_US;
}

/** resident memory of a process and all its descendants, bytes */
export function treeRss(pid: number): number {
  let kb = 0;
  for (const p of treeOf(pid)) {
    try {
      const m = /VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${p}/status`, 'utf8'));
      kb += Number(m?.[1] ?? 0);
    } catch {
      /* gone */
    }
  }
  return kb * 1024;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function waitReady(url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  let ok = 0;
  while (Date.now() < until) {
    const r = await fetch(`${url}/readyz`).catch(() => null);
    // several answers in a row: the workers start one after another, and each must be listening
    ok = r?.status === 200 ? ok + 1 : 0;
    if (ok >= 10) return;
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error(`the clustered gateway did not become ready at ${url}`);
}

export interface ClusterGateway {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startClusterGateway(opts: { root: string; databaseUrl: string; workers: number; dataDir: string; env?: Record<string, string> }): Promise<ClusterGateway> {
  const port = await freePort();
  // BENCH_CPU_PROF_DIR (bench:ocpp --profile): the primary profiles, and node:cluster gives its workers the same flags
  const prof = process.env.BENCH_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF_DIR}`] : [];
  // BENCH_GATEWAY_NODE_FLAGS: node/V8 flags on the gateway's command line (inherited by its workers), for the ones
  // NODE_OPTIONS does not take (e.g. --single-threaded-gc)
  const flags = [...startNodeFlags(), ...(process.env.BENCH_GATEWAY_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean)];
  const child: ChildProcess = spawn(process.execPath, [...prof, ...flags, '--import', 'tsx', path.join(opts.root, 'src', 'main.ts')], {
    cwd: opts.root,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: {
      ...process.env,
      ...opts.env,
      DATABASE_URL: opts.databaseUrl,
      WORKERS: String(opts.workers),
      PORT: String(port),
      HOST: '127.0.0.1',
      APP_ENV: 'sandbox',
      JOBS_ENABLED: 'false',
      DATA_DIR: opts.dataDir,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'fatal',
      // BENCH_GATEWAY_NODE_OPTIONS: node options for the gateway's processes alone (e.g. a V8 heap setting)
      ...(process.env.BENCH_GATEWAY_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_GATEWAY_NODE_OPTIONS } : {}),
    },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(url, 120_000);
  return {
    url,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        const t = setTimeout(() => child.kill('SIGKILL'), 40_000);
        child.once('exit', () => {
          clearTimeout(t);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}
