// D265: a job's session advisory lock whose connection died on the service's side (a NAT or firewall dropped its
// state: the backend stays open and never hears of it). Before, the server kept the lock until its TCP keepalive gave
// up (about 2 h 11 min by default), every run of that job was skipped meanwhile, and the run whose unlock failed
// answered an error although its work had committed and its record said ok. Now the lock's session has
// idle_session_timeout with a heartbeat while the job runs (short here), so the server ends it and the lock is free;
// and the run reports its own outcome, the unlock failure logged (job.unlock_failed).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldAdvisoryLocks, LOCK_NAMESPACE, withAdvisoryLock } from '../../src/db/locks.ts';
import { runJobExclusive } from '../../src/jobs/scheduler.ts';
import type { Job } from '../../src/jobs/job.ts';
import { createTestService, type TestService } from '../helpers/app.ts';
import { proxiedDatabase } from '../helpers/db-proxy.ts';
import { logCapture } from '../helpers/log-capture.ts';

async function until(what: string, cond: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!process.env.DATABASE_URL)('D265: a lock held by a dead connection', () => {
  let db: Awaited<ReturnType<typeof proxiedDatabase>>;
  let svc: TestService;
  const log = logCapture('info');

  beforeAll(async () => {
    db = await proxiedDatabase(5);
    svc = await createTestService({ db: db.viaProxy, logger: log.logger });
  });
  afterAll(async () => {
    await svc?.close();
    await db?.close();
  });

  /** cuts the lock's connection on the service's side only; the backend holding `name` stays open, unaware */
  const orphanLockHolder = async (name: string) => {
    const r = await sql<{ port: number }>`
      select a.client_port as port from pg_locks l join pg_stat_activity a on a.pid = l.pid
       where l.locktype = 'advisory' and l.granted and l.objsubid = 2 and l.classid::bigint = ${LOCK_NAMESPACE}::bigint
         and l.objid::bigint = (hashtext(${name})::bigint + 4294967296) % 4294967296`.execute(db.direct.db);
    expect(r.rows).toHaveLength(1);
    expect(db.proxy.orphan(r.rows[0]!.port)).toBe(true);
  };
  const held = async (name: string) => (await heldAdvisoryLocks(db.direct.db, 'pg', [name])).has(name);

  it('the server ends the orphaned session within its idle_session_timeout, and the lock with it', { timeout: 30_000 }, async () => {
    const name = 'job:net-orphan';
    const unlockFailures: unknown[] = [];
    const r = await withAdvisoryLock(
      svc.deps.db,
      'pg',
      name,
      async () => {
        await orphanLockHolder(name);
        return 'done';
      },
      { wait: false, liveness: { heartbeatMs: 200, idleSessionTimeoutMs: 1_000 }, onUnlockFailed: (err) => unlockFailures.push(err) },
    );
    expect(r).toEqual({ acquired: true, value: 'done' });
    expect(unlockFailures).toHaveLength(1);
    await until('the orphaned lock released', async () => !(await held(name)));
    const again = await withAdvisoryLock(svc.deps.db, 'pg', name, async () => 'again', { wait: false });
    expect(again).toEqual({ acquired: true, value: 'again' });
  });

  it("a run whose unlock failed after its work committed reports its own outcome, recorded ok; the failure is logged", { timeout: 30_000 }, async () => {
    const job: Job = {
      name: 'net-unlock',
      cron: () => null,
      async run() {
        await orphanLockHolder('job:net-unlock');
        return { done: 1 };
      },
    };
    const out = await runJobExclusive(svc.deps, job, 'admin');
    expect(out).toEqual({ ran: true, result: { done: 1 } });
    const rec = await db.direct.db.selectFrom('job_runs').selectAll().where('job', '=', 'net-unlock').executeTakeFirstOrThrow();
    expect(rec.outcome).toBe('ok');
    const lines = log.of('job.unlock_failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, job: 'net-unlock' });
  });
});
