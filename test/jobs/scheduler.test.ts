// Scheduled jobs run in one process at a time: an advisory lock on PostgreSQL, an in-process mutex on PGlite.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../src/jobs/job.ts';
import { allJobs } from '../../src/jobs/registry.ts';
import { listJobs, runJobExclusive, slotCoordinator, startScheduler } from '../../src/jobs/scheduler.ts';
import { createTestService, type TestService } from '../helpers/app.ts';

function gatedJob(name: string) {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  let started!: () => void;
  const isStarted = new Promise<void>((r) => (started = r));
  let runs = 0;
  const job: Job = {
    name,
    cron: () => null,
    run: async () => {
      runs++;
      started();
      await gate;
      return { runs };
    },
  };
  return { job, open, isStarted, runs: () => runs };
}

describe('scheduler', () => {
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    a = await createTestService();
    b = await createTestService({ db: a.testDb });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it(`two concurrent runs of one job: one runs, one skips (${process.env.DATABASE_URL ? 'pg_try_advisory_lock' : 'PGlite mutex'})`, async () => {
    const g = gatedJob('test-gated');
    const first = runJobExclusive(a.deps, g.job);
    await g.isStarted;
    // the second "process" (another app instance on the same database) finds the job running
    const second = await runJobExclusive(b.deps, g.job);
    expect(second).toEqual({ ran: false, reason: 'already_running' });
    g.open();
    expect(await first).toEqual({ ran: true, result: { runs: 1 } });
    expect(g.runs()).toBe(1);
    // the lock is released: the next run goes ahead
    const again = gatedJob('test-gated');
    again.open();
    expect(await runJobExclusive(b.deps, again.job)).toEqual({ ran: true, result: { runs: 1 } });
  });

  if (process.env.DATABASE_URL) {
    it('on PostgreSQL the lock is a session advisory lock visible in pg_locks while the job runs', async () => {
      const g = gatedJob('test-visible');
      const run = runJobExclusive(a.deps, g.job);
      await g.isStarted;
      const { sql } = await import('kysely');
      const locks = await sql<{ n: string }>`select count(*) as n from pg_locks where locktype = 'advisory' and granted`.execute(b.deps.db);
      expect(Number(locks.rows[0]!.n)).toBeGreaterThanOrEqual(1);
      g.open();
      await run;
    });
  }

  it('a failing job propagates its error and releases the lock', async () => {
    const failing: Job = { name: 'test-failing', cron: () => null, run: async () => Promise.reject(new Error('nope')) };
    await expect(runJobExclusive(a.deps, failing)).rejects.toThrow('nope');
    const ok: Job = { name: 'test-failing', cron: () => null, run: async () => 'fine' };
    expect(await runJobExclusive(a.deps, ok)).toEqual({ ran: true, result: 'fine' });
  });

  it('each run that took the lock is recorded, and any process reads it with whether the job runs now (D146)', async () => {
    const g = gatedJob('test-recorded');
    expect(await listJobs(b.deps, [g.job])).toEqual([{ name: 'test-recorded', cron: null, running: false, last_run: null, last_ok_at: null }]);
    const run = runJobExclusive(a.deps, g.job);
    await g.isStarted;
    // the other "process" sees the run through the lock, not through anything in a's memory
    expect((await listJobs(b.deps, [g.job]))[0]).toMatchObject({ running: true, last_run: null });
    g.open();
    await run;
    const [done] = await listJobs(b.deps, [g.job]);
    expect(done).toMatchObject({ running: false, last_run: { trigger: 'admin', outcome: 'ok', result: { runs: 1 }, error: null } });
    expect(Date.parse(done!.last_run!.finished_at)).toBeGreaterThanOrEqual(Date.parse(done!.last_run!.started_at));
    expect(done!.last_ok_at).toBe(done!.last_run!.finished_at);

    // a failure replaces the last run and keeps when it last went well
    const failing: Job = { name: 'test-recorded', cron: () => null, run: async () => Promise.reject(new Error('no connection\u0000 to the register')) };
    await expect(runJobExclusive(b.deps, failing, 'schedule')).rejects.toThrow('no connection');
    const [failed] = await listJobs(a.deps, [failing]);
    expect(failed).toMatchObject({ running: false, last_run: { trigger: 'schedule', outcome: 'failed', result: null, error: 'no connection to the register' } });
    expect(failed!.last_ok_at).toBe(done!.last_ok_at);
  });

  it('schedules one node-cron task per job with a cron, runs it, and stops', async () => {
    let fired!: () => void;
    const firedOnce = new Promise<void>((r) => (fired = r));
    let count = 0;
    const everySecond: Job = { name: 'test-every-second', cron: () => '* * * * * *', run: async () => { count++; fired(); } };
    const onDemand: Job = { name: 'test-on-demand', cron: () => null, run: async () => undefined };
    const s = startScheduler(a.deps, [everySecond, onDemand]);
    expect(s.jobs).toEqual(['test-every-second']);
    await firedOnce;
    await s.stop();
    expect((await listJobs(a.deps, [everySecond]))[0]!.last_run).toMatchObject({ trigger: 'schedule', outcome: 'ok', result: null });
    const after = count;
    await new Promise((r) => setTimeout(r, 1200));
    expect(count).toBe(after);
  });

  it('two processes scheduling one fast job run each scheduled moment once between them (D162)', async () => {
    let runs = 0;
    const fast: Job = { name: 'test-fast-tick', cron: () => '* * * * * *', run: async () => { runs++; } };
    const one = startScheduler(a.deps, [fast]);
    const two = startScheduler(b.deps, [fast]);
    await new Promise((r) => setTimeout(r, 3500));
    await one.stop();
    await two.stop();
    const slots = await a.deps.db.selectFrom('job_slots').select('key').where('key', 'like', 'ere:test-fast-tick:%').execute();
    // every moment was claimed by one process and run by it: as many runs as claimed moments, none twice
    expect(slots.length).toBeGreaterThanOrEqual(2);
    expect(runs).toBe(slots.length);
    expect(slots.every((s) => /^ere:test-fast-tick:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/.test(s.key))).toBe(true);
  });

  it('a process whose machine is ahead of the database waits for the database to reach the moment before it claims it (D253)', async () => {
    // this machine's clock 1.5 s ahead of the database's: node-cron fires the moment 1.5 s early by the database
    const ahead = { ...a.deps, clock: () => new Date(Date.now() - 1500) };
    const moment = new Date(Math.floor(Date.now() / 1000) * 1000 + 1000);
    await new Promise((r) => setTimeout(r, moment.getTime() - Date.now()));
    const claimed = await slotCoordinator(ahead).shouldRun(`ere:test-ahead:${moment.toISOString()}`, 0);
    expect(claimed).toBe(true);
    expect(ahead.clock().getTime()).toBeGreaterThanOrEqual(moment.getTime());
    // a process whose machine is in time or behind claims at once; a claimed moment is not run again
    const inTime = { ...a.deps, clock: () => new Date(Date.now() + 1500) };
    expect(await slotCoordinator(inTime).shouldRun(`ere:test-ahead:${moment.toISOString()}`, 0)).toBe(false);
    // a stopping process claims nothing after its wait
    const stopping = { ...ahead, startup: { ...a.deps.startup, stopping: true } };
    const later = new Date(Math.floor(Date.now() / 1000) * 1000 + 1000);
    expect(await slotCoordinator(stopping).shouldRun(`ere:test-ahead:${later.toISOString()}`, 0)).toBe(false);
    const rows = await a.deps.db.selectFrom('job_slots').select('key').where('key', '=', `ere:test-ahead:${later.toISOString()}`).execute();
    expect(rows).toEqual([]);
  });

  it('every registered job has a unique kebab-case name and a valid cron or none', async () => {
    const cron = await import('node-cron');
    const names = allJobs.map((j) => j.name);
    expect(new Set(names).size).toBe(names.length);
    for (const j of allJobs) {
      expect(j.name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      const expr = j.cron(a.config);
      if (expr !== null) expect(cron.validate(expr), `${j.name}: ${expr}`).toBe(true);
    }
    expect(names).toContain('rate-limit-cleanup');
  });
});
