// What the in-process benchmarks share: the service on a fresh PostgreSQL database of its own (dropped afterwards,
// with its data dir), and the exit of a benchmark's main (0 when it ran, 1 with the error when it failed).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config.ts';
import type { Deps } from '../src/deps.ts';
import { createLogger } from '../src/logger.ts';
import { startService } from '../src/main.ts';
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
