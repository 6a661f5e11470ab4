// bench:ocpp --db-waits: what the gateway's statements waited for in PostgreSQL, from pg_stat_activity samples
// (bench/db-waits.ts): the rows as samples, the summary by kind over a window, and the sampler against a real server.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { DbWaitSampler, formatWaits, sampleOf, summariseWaits } from '../../bench/db-waits.ts';

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

describe.runIf(!!process.env.DATABASE_URL)('the sampler on PostgreSQL', () => {
  it('sees a statement of another connection of the database waiting, with its wait event and age', async () => {
    const url = process.env.DATABASE_URL!;
    const database = decodeURIComponent(new URL(url).pathname.slice(1)) || 'postgres';
    const sampler = new DbWaitSampler(url, database, 20);
    await sampler.start();
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    try {
      const from = Date.now();
      await other.query('select pg_sleep(0.4)');
      await sampler.stop();
      const w = summariseWaits(sampler.samples, from, Date.now(), 150);
      const sleep = w.find((x) => x.kind === 'Timeout/PgSleep');
      expect(sleep).toBeDefined();
      expect(sleep!.longest_ms).toBeGreaterThanOrEqual(150);
      expect(sleep!.longest_ms).toBeLessThan(1000);
    } finally {
      await sampler.stop();
      await other.end();
    }
  });
});
