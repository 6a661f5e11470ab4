// bench:ocpp --db-waits: what the gateway's statements waited for in PostgreSQL, from pg_stat_activity samples
// (bench/db-waits.ts): the rows as samples, the summary by kind over a window, and the sampler against a real server.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import os from 'node:os';
import {
  DbWaitSampler,
  formatTableUpdates,
  formatWal,
  formatWaits,
  readServerCpu,
  sampleOf,
  serverCpuBetween,
  summariseWaits,
  tableUpdatesBetween,
  walBetween,
} from '../../bench/db-waits.ts';

describe('database wait samples', () => {
  it('reads a backend as its wait event, running, or an idle transaction; an idle backend is no sample', () => {
    expect(sampleOf(1, { state: 'active', wait_event_type: 'IO', wait_event: 'WALSync', query_ms: 230, idle_ms: 0 })).toEqual({ at: 1, kind: 'IO/WALSync', ms: 230 });
    expect(sampleOf(1, { state: 'active', wait_event_type: null, wait_event: null, query_ms: 12, idle_ms: 0 })).toEqual({ at: 1, kind: 'running', ms: 12 });
    expect(sampleOf(1, { state: 'idle in transaction', wait_event_type: 'Client', wait_event: 'ClientRead', query_ms: 500, idle_ms: 420 })).toEqual({
      at: 1,
      kind: 'idle in transaction',
      ms: 420,
    });
    expect(sampleOf(1, { state: 'idle', wait_event_type: 'Client', wait_event: 'ClientRead', query_ms: 9000, idle_ms: 9000 })).toBeNull();
  });

  it('counts the sampling moments of each kind over the threshold inside the window, the longest first', () => {
    const samples = [
      { at: 100, kind: 'IO/WALSync', ms: 150 },
      { at: 100, kind: 'IO/WALSync', ms: 120 }, // same moment: one sample
      { at: 200, kind: 'IO/WALSync', ms: 250 },
      { at: 200, kind: 'LWLock/WALWrite', ms: 240 },
      { at: 300, kind: 'running', ms: 40 }, // under the threshold
      { at: 900, kind: 'Lock/transactionid', ms: 5000 }, // outside the window
    ];
    const w = summariseWaits(samples, 0, 500, 100);
    expect(w).toEqual([
      { kind: 'IO/WALSync', samples: 2, longest_ms: 250 },
      { kind: 'LWLock/WALWrite', samples: 1, longest_ms: 240 },
    ]);
    expect(formatWaits(w, 100)).toBe('IO/WALSync at 2 sample(s), longest 250 ms; LWLock/WALWrite at 1 sample(s), longest 240 ms');
    expect(formatWaits([], 100)).toBe('none over 100 ms');
    expect(formatWaits([{ kind: 'idle in transaction', samples: 3, longest_ms: 400 }], 100)).toBe('an open transaction waiting for the gateway at 3 sample(s), longest 400 ms');
  });
});

describe("a table's updates in a window", () => {
  it('is what the counters grew by inside the window, with the share that was heap-only', () => {
    const samples = [
      { at: 50, updates: 10, hot: 0 },
      { at: 100, updates: 100, hot: 40 },
      { at: 200, updates: 400, hot: 250 },
      { at: 300, updates: 1_100, hot: 790 },
    ];
    const t = tableUpdatesBetween(samples, 100, 300);
    expect(t).toEqual({ updates: 1_000, hot: 750 });
    expect(tableUpdatesBetween(samples, 150, 250)).toBeNull(); // one sample inside
    expect(formatTableUpdates(t, 1_000, 'MeterValues')).toBe('1,000 updates (1.00 per MeterValues), 750 of them heap-only (75.0 %)');
    expect(formatTableUpdates(null, 1_000, 'MeterValues')).toBe('not sampled');
  });
});

describe('the WAL of a window', () => {
  const at = (t: number, bytes: number, records: number, fpi: number, syncs: number, checkpoints = 0) => ({ at: t, bytes, records, fpi, syncs, checkpoints });

  it('is what the counters grew by from the first sample inside the window to the last one inside it', () => {
    const samples = [at(50, 1_000, 10, 0, 1), at(100, 2_000, 20, 1, 2), at(200, 5_000, 50, 4, 5), at(300, 9_000, 90, 10, 9, 1), at(400, 20_000, 200, 50, 20, 1)];
    expect(walBetween(samples, 100, 300)).toEqual({ seconds: 0.2, bytes: 7_000, records: 70, fpi: 9, syncs: 7, checkpoints: 1 });
    expect(walBetween(samples, 90, 310)).toEqual(walBetween(samples, 100, 300));
    expect(walBetween(samples, 120, 250)).toBeNull(); // one sample inside: no difference to take
  });

  it('reads as one line, per unit of work', () => {
    const w = { seconds: 30, bytes: 3 * 1048576, records: 40_000, fpi: 1_000, syncs: 1_500, checkpoints: 0 };
    expect(formatWal(w, 10_000, 'MeterValues')).toBe('3.0 MB in 30.0 s (315 bytes per MeterValues, 40,000 records, 2.5 % of them full-page images), 1,500 flushes, 0 checkpoint(s)');
    expect(formatWal(w, 0, 'MeterValues')).toBe('3.0 MB in 30.0 s (40,000 records, 2.5 % of them full-page images), 1,500 flushes, 0 checkpoint(s)');
    expect(formatWal(null, 10, 'message')).toBe('not sampled');
  });
});

describe("the server's own CPU", () => {
  it('reads the ticks of the processes named postgres from /proc (user + system), and nothing of the others', () => {
    const proc = fs.mkdtempSync(path.join(os.tmpdir(), 'proc-'));
    const stat = (pid: number, name: string, utime: number, stime: number) => {
      fs.mkdirSync(path.join(proc, String(pid)));
      // pid (comm) state ppid … : utime and stime are the 14th and 15th fields
      fs.writeFileSync(path.join(proc, String(pid), 'stat'), `${pid} (${name}) S 1 1 1 0 -1 4194560 100 0 0 0 ${utime} ${stime} 0 0 20 0 1 0 100 1000 10\n`);
    };
    stat(10, 'postgres', 30, 12);
    stat(11, 'postgres', 5, 0);
    stat(12, 'node', 900, 100);
    stat(13, 'post gres) x', 1, 1); // a name with a space and a parenthesis is read to its last ')'
    fs.mkdirSync(path.join(proc, 'self'));
    const s = readServerCpu(7, proc);
    expect(s.at).toBe(7);
    expect([...s.ticks].sort()).toEqual([
      [10, 42],
      [11, 5],
    ]);
    expect(readServerCpu(1, path.join(proc, 'missing')).ticks.size).toBe(0);
    fs.rmSync(proc, { recursive: true, force: true });
  });

  it('over a window: each process from its first sample inside it, one started inside counted whole', () => {
    const at = (t: number, ticks: Array<[number, number]>) => ({ at: t, ticks: new Map(ticks) });
    const samples = [
      at(0, [[1, 100], [2, 50]]),
      at(1_000, [[1, 110], [2, 60]]),
      at(2_000, [[1, 150], [2, 60], [3, 20]]), // backend 3 started
      at(3_000, [[1, 190], [3, 45]]), // backend 2 ended
      at(9_000, [[1, 900]]),
    ];
    // 1: 190 − 110; 2: 60 − 60; 3: 45 from nothing
    expect(serverCpuBetween(samples, 1_000, 3_000)).toEqual({ seconds: 2, cpu_s: 1.25 });
    expect(serverCpuBetween(samples, 1_500, 2_500)).toBeNull(); // one sample inside
    expect(serverCpuBetween([at(0, []), at(1_000, [])], 0, 1_000)).toBeNull(); // no postgres process seen
  });
});

describe('bench:ocpp refuses options it cannot carry out', () => {
  const root = path.resolve(import.meta.dirname, '../..');
  it('--db-waits without PostgreSQL, before anything runs: the gateway would be on PGlite, which has nothing to sample', () => {
    const env = { ...process.env };
    delete env.DATABASE_URL;
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/ocpp.bench.ts', '--db-waits', '--count', '10'], { cwd: root, env, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--db-waits samples PostgreSQL: set DATABASE_URL');
    expect(r.stdout).toBe('');
  });

  it('--history-months takes a whole number of months', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/ocpp.bench.ts', '--history-months', '1.5'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--history-months takes a whole number of months');
  });

  it('--quirks takes the simulator\'s quirks', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'bench/ocpp.bench.ts', '--quirks', 'no-txid,no-such'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--quirks takes a comma list of kwh, phases');
    expect(r.stderr).toContain('(not no-such)');
  });
});

/** A sampler of the test database (every 20 ms) and another connection to it, for the length of `run`. */
async function sampling(run: (sampler: DbWaitSampler, other: pg.Client) => Promise<void>): Promise<void> {
  const url = process.env.DATABASE_URL!;
  const database = decodeURIComponent(new URL(url).pathname.slice(1)) || 'postgres';
  const sampler = new DbWaitSampler(url, database, 20);
  await sampler.start();
  const other = new pg.Client({ connectionString: url });
  await other.connect();
  try {
    await run(sampler, other);
  } finally {
    await sampler.stop();
    await other.end().catch(() => {}); // the test may have ended it
  }
}

describe.runIf(!!process.env.DATABASE_URL)('the sampler on PostgreSQL', () => {
  it('sees a statement of another connection of the database waiting, with its wait event and age', async () => {
    await sampling(async (sampler, other) => {
      const from = Date.now();
      await other.query('select pg_sleep(0.4)');
      await sampler.stop();
      const w = summariseWaits(sampler.samples, from, Date.now(), 150);
      const sleep = w.find((x) => x.kind === 'Timeout/PgSleep');
      expect(sleep).toBeDefined();
      expect(sleep!.longest_ms).toBeGreaterThanOrEqual(150);
      expect(sleep!.longest_ms).toBeLessThan(1000);
    });
  });

  it("reads the server's WAL counters: a write shows in the bytes between two samples", async () => {
    await sampling(async (sampler, other) => {
      // the first sample counted must have been read before the write (a sample stamped after a moment may have
      // read the counters before it, or after a write made then): the latest of two taken from now on
      const n = sampler.wal.length;
      while (sampler.wal.length < n + 2) await new Promise((r) => setTimeout(r, 10));
      const from = sampler.wal.at(-1)!.at;
      // a WAL record of 1 MB that touches no table (a logical decoding message, written at any wal_level)
      await other.query(`select pg_logical_emit_message(false, 'db-waits-test', repeat('x', 1048576))`);
      // a backend reports its counters at most once a second, up to 10 s late when it then sits idle, and always
      // when it ends; asked to (PostgreSQL 15), at its next idle moment. On a busy server the report still takes a while.
      await other.query('select pg_stat_force_next_flush()');
      await other.end();
      let w = walBetween(sampler.wal, from, Date.now());
      for (let i = 0; i < 300 && (!w || w.bytes < 1048576); i++) {
        await new Promise((r) => setTimeout(r, 50));
        w = walBetween(sampler.wal, from, Date.now());
      }
      expect(w!.bytes).toBeGreaterThanOrEqual(1048576);
      expect(w!.records).toBeGreaterThanOrEqual(1);
    });
  });
});
