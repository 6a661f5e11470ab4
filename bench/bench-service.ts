// What the in-process benchmarks share: the service on a fresh PostgreSQL database of its own (dropped afterwards,
// with its data dir), and the exit of a benchmark's main (0 when it ran, 1 with the error when it failed).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import type { Deps } from '../src/deps.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/main.ts';
import { startServiceProcess, type ServiceProcess } from '../test/helpers/service-process.ts';
import { freshDatabase } from './fresh-db.ts';

/** Runs fn with the service's deps on a fresh database next to `base` (no HTTP, no jobs, no seed); cleans up after. */
export async function withBenchService(base: string, name: string, fn: (deps: Deps) => Promise<void>): Promise<void> {
  const fresh = await freshDatabase(base, `ere_bench_${name}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `ere-bench-${name}-`));
  try {
    const config = loadConfig({ ...process.env, DATABASE_URL: fresh.url, DATA_DIR: dir, APP_ENV: 'sandbox', JOBS_ENABLED: 'false', LOG_LEVEL: 'fatal' });
    const service = await startService({ config, logger: createLogger({ level: 'fatal' }), listen: false, seed: false, jobs: false });
    try {
      await fn(service.deps);
    } finally {
      await service.stop();
    }
  } finally {
    await fresh.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs a benchmark's main and exits with its outcome (`before` runs first when it succeeded: output still to flush). */
export function runBench(name: string, main: () => Promise<void>, before: () => Promise<void> = async () => {}): void {
  main().then(
    () => before().then(() => process.exit(0)),
    (err: unknown) => {
      process.stderr.write(`${name}: ${(err as Error).stack ?? err}\n`);
      process.exit(1);
    },
  );
}

/** Two service processes, A and B, on one fresh PostgreSQL database next to `base` (sandbox, no jobs). */
export interface TwoServices {
  A: ServiceProcess;
  B: ServiceProcess;
  /** the seeded sandbox user's personal token (chargers:read and chargers:write) */
  ownerToken: string;
}

/**
 * Runs fn with two service processes sharing one fresh database (what one process must tell the other goes through
 * PostgreSQL); `env` adds to their environment. Stops both and drops the database afterwards.
 */
export async function withTwoServices(base: string, name: string, env: Record<string, string>, fn: (s: TwoServices) => Promise<void>): Promise<void> {
  const db = await freshDatabase(base, `ere_bench_${name}`);
  const dirs = [fs.mkdtempSync(path.join(os.tmpdir(), `ere-${name}-a-`)), fs.mkdtempSync(path.join(os.tmpdir(), `ere-${name}-b-`))];
  // the owner registers every charger of the run through the Personal API: its per-minute limit out of the way
  const common = { DATABASE_URL: db.url, APP_ENV: 'sandbox', JOBS_ENABLED: 'false', LOG_LEVEL: 'warn', RATE_LIMIT_PERSONAL_PER_MIN: '100000', ...env };
  const started: ServiceProcess[] = [];
  try {
    for (const dir of dirs) started.push(await startServiceProcess({ ...common, DATA_DIR: dir }));
    const ownerToken = (JSON.parse(fs.readFileSync(path.join(dirs[0]!, 'demo-credentials.json'), 'utf8')) as { user: { token: string } }).user.token;
    await fn({ A: started[0]!, B: started[1]!, ownerToken });
  } finally {
    for (const s of started) await s.kill('SIGTERM');
    await db.drop();
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The p-th percentile of sorted values (NaN when there are none). */
export const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
