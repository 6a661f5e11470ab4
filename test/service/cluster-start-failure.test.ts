// D152: with WORKERS>1 the primary restarts workers that die, and when they keep dying before they listen (a
// configuration no worker can start with) it exits 1, so a supervisor sees the failure; it used to exit 0 as soon
// as every worker was dead (its restart timer was unref()'d). SIGTERM while it restarts still exits 0.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { tempDirs } from '../helpers/temp-dirs.ts';
import { nodeArgs } from '../helpers/service-process.ts';

// nothing listens on port 1: every worker fails its first use of the database
const UNREACHABLE = 'postgresql://root@127.0.0.1:1/postgres';

const dataDirs = tempDirs('ere-cluster-fail-');

function startPrimary() {
  const dataDir = dataDirs();
  const child = spawn(process.execPath, nodeArgs('src/main.ts'), {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', WORKERS: '2', DATABASE_URL: UNREACHABLE, DATA_DIR: dataDir, JOBS_ENABLED: 'false', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number | string | null>((r) => child.on('close', (code, signal) => r(code ?? signal)));
  return { child, exited, output: () => out };
}

describe('D152: a cluster whose workers cannot start', () => {
  it('exits 1 after workers in a row died before they listened, naming the key they failed on', { timeout: 120_000 }, async () => {
    const p = startPrimary();
    expect(await p.exited).toBe(1);
    expect(p.output()).toContain('cannot start: DATABASE_URL');
    expect(p.output()).toMatch(/5 workers in a row exited before they listened/);
  });

  it('SIGTERM while it restarts them exits 0', { timeout: 120_000 }, async () => {
    const p = startPrimary();
    await new Promise<void>((resolve) => {
      const check = () => /a worker exited; starting another/.test(p.output()) && resolve();
      p.child.stdout.on('data', check);
      p.child.stderr.on('data', check);
    });
    p.child.kill('SIGTERM');
    expect(await p.exited).toBe(0);
  });
});
