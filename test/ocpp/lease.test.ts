// C4.8 process leases: a charger is online only while the process holding its socket holds an unexpired lease;
// commands never wait on a dead holder; a restart ends the leases of this host's dead processes at once; a clean
// stop drops its lease; /readyz answers 200 only once start-up is complete.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_NAMESPACE } from '../../src/db/locks.ts';
import { hostKey } from '../../src/ocpp/instance-lease.ts';
import { CHARGER_CHANGED, chargerIdsOf } from '../../src/domain/charging/charger-changes.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { createTestDb } from '../helpers/db.ts';
import { aUser, bearer } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, type TestCharger } from '../helpers/ocpp-factories.ts';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
let a: TestService; // holds the sockets; its lease is the one that lapses
let b: TestService; // a second process on the same database: answers GET /chargers and sends commands
let user: { userId: string; token: string };

beforeAll(async () => {
  // A renews only every 200 s, so the lapses below are the test's own, never undone by a renewal mid-test
  a = await createTestService({ listen: true, env: { INSTANCE_LEASE_SECONDS: '600', OCPP_CALL_TIMEOUT_SECONDS: '60' } });
  b = await createTestService({ listen: true, db: a.testDb, env: { OCPP_CALL_TIMEOUT_SECONDS: '60' } });
  user = await aUser(a.deps);
});
afterAll(async () => {
  await b?.close();
  await a?.close();
});

const instanceOf = (s: TestService) => s.deps.ocpp!.instanceId;
const lapse = (s: TestService) =>
  s.deps.db.updateTable('ocpp_instances').set({ expires_at: sql<Date>`now() - interval '1 second'` }).where('id', '=', instanceOf(s)).execute();
const renew = (s: TestService) =>
  s.deps.db.updateTable('ocpp_instances').set({ expires_at: sql<Date>`now() + interval '10 minutes'` }).where('id', '=', instanceOf(s)).execute();

async function statusOf(s: TestService, id: string): Promise<string> {
  const res = await s.app.inject({ method: 'GET', url: '/chargers', headers: bearer(user.token) });
  return (res.json().chargers as Array<{ id: string; status: string }>).find((c) => c.id === id)!.status;
}
const command = (s: TestService, chargerId: string, action: string, payload: unknown) =>
  s.app.inject({ method: 'POST', url: `/admin/chargers/${chargerId}/commands`, headers: admin, payload: { action, payload } });

describe('process leases (C4.8)', () => {
  it('each listening service holds a lease row until it stops cleanly', async () => {
    const c = await createTestService({ listen: true, db: a.testDb });
    const id = instanceOf(c);
    const row = await a.deps.db.selectFrom('ocpp_instances').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ host: hostKey(), pid: process.pid });
    expect(row.expires_at.getTime()).toBeGreaterThan(row.renewed_at.getTime());
    const ch = await anOcppCharger(a, user);
    const cli = await connectCharger(c as TestService, ch, 'ocpp1.6');
    expect(await statusOf(b, ch.chargerId)).toBe('online');
    await c.close(); // closes its sockets, marks them disconnected and drops the lease
    await cli.close().catch(() => undefined);
    expect(await a.deps.db.selectFrom('ocpp_instances').select('id').where('id', '=', id).execute()).toEqual([]);
    expect(await statusOf(b, ch.chargerId)).toBe('offline');
  });

  it('a charger whose holder lease lapsed is offline everywhere, and a command for it is 409 at once', async () => {
    const ch = await anOcppCharger(a, user);
    const cli = await connectCharger(a, ch, 'ocpp1.6');
    const received: string[] = [];
    cli.handle('Reset', async () => {
      received.push('Reset');
      return { status: 'Accepted' };
    });
    try {
      expect(await statusOf(b, ch.chargerId)).toBe('online');
      await lapse(a);
      // the socket is still open, but nothing can count on a process that stopped renewing
      expect(await statusOf(b, ch.chargerId)).toBe('offline');
      expect(await statusOf(a, ch.chargerId)).toBe('offline');
      for (const via of [b, a]) {
        const res = await command(via, ch.chargerId, 'Reset', { type: 'Soft' });
        expect(res.statusCode).toBe(409);
        expect(res.json()).toMatchObject({ error: 'charger_offline' });
      }
      // nothing was queued for the dead holder, nothing reached the charger
      expect(await a.deps.db.selectFrom('ocpp_commands').select('id').where('charger_id', '=', ch.chargerId).execute()).toEqual([]);
      expect(received).toEqual([]);
      await renew(a); // the holder renews again (a stall, not a death): its chargers read online again
      expect(await statusOf(b, ch.chargerId)).toBe('online');
    } finally {
      await renew(a);
      await cli.close();
    }
  });

  it('a command sent by a holder that dies meanwhile answers 504 (outcome unknown) at once instead of waiting for the timeout (D106)', async () => {
    const ch = await anOcppCharger(a, user);
    const cli = await connectCharger(a, ch, 'ocpp1.6');
    let reached!: () => void;
    const atCharger = new Promise<void>((r) => (reached = r));
    cli.handle('Reset', () => {
      reached();
      return new Promise(() => {}); // the holder is killed before the charger answers
    });
    try {
      const pending = command(b, ch.chargerId, 'Reset', { type: 'Hard' });
      await atCharger; // A picked the command up from PostgreSQL and sent it
      await lapse(a);
      // with OCPP_CALL_TIMEOUT_SECONDS 60 this would otherwise outlast the test's own timeout
      const res = await pending;
      // the charger got the Reset: not "offline" (an operator would send it again), but an outcome not known
      expect(res.statusCode).toBe(504);
      expect(res.json()).toMatchObject({ error: 'charger_timeout', detail: expect.stringContaining('outcome is unknown') });
      const [row] = await a.deps.db.selectFrom('ocpp_commands').selectAll().where('charger_id', '=', ch.chargerId).execute();
      expect(row).toMatchObject({ status: 'timeout', error: 'holder_gone' });
    } finally {
      await renew(a);
      await cli.close({ force: true });
    }
  });

  it('a starting service ends the leases of processes this host no longer runs; a live one keeps its lease', async () => {
    const exited = spawnSync(process.execPath, ['-e', '0']).pid; // a pid that no longer exists
    const host = hostKey();
    const dead = await anOcppCharger(a, user);
    const alive = await anOcppCharger(a, user);
    const leases = [
      { id: 'killed-elsewhere', host, pid: exited, charger: dead },
      // our parent (the test runner) is alive: a process that still runs is never judged
      { id: 'running-elsewhere', host, pid: process.ppid, charger: alive },
    ];
    for (const l of leases) {
      await a.deps.db.insertInto('ocpp_instances').values({ id: l.id, host: l.host, pid: l.pid, expires_at: sql<Date>`now() + interval '10 minutes'` }).execute();
      await markHeldBy(l.charger, l.id);
    }
    expect(await statusOf(b, dead.chargerId)).toBe('online');
    // D163: the push streams of any process hear that the dead process's chargers went offline
    const heard = new Promise<string[]>((resolve) => {
      const stop = b.deps.bus!.subscribe(CHARGER_CHANGED, (p) => {
        const ids = chargerIdsOf(p);
        if (ids.includes(dead.chargerId)) {
          stop();
          resolve(ids);
        }
      });
    });
    await b.deps.bus!.listening(CHARGER_CHANGED);
    const c = await createTestService({ listen: true, db: a.testDb });
    try {
      expect(await heard).not.toContain(alive.chargerId);
      expect(await statusOf(b, dead.chargerId)).toBe('offline');
      expect(await statusOf(b, alive.chargerId)).toBe('online');
      const ids = (await a.deps.db.selectFrom('ocpp_instances').select('id').execute()).map((r) => r.id);
      expect(ids).toEqual(expect.arrayContaining([instanceOf(a), instanceOf(b), instanceOf(c), 'running-elsewhere']));
      expect(ids).not.toContain('killed-elsewhere');
    } finally {
      await c.close();
      await a.deps.db.deleteFrom('ocpp_instances').where('id', '=', 'running-elsewhere').execute();
    }
  });
});

async function markHeldBy(ch: TestCharger, instanceId: string): Promise<void> {
  await a.deps.db
    .updateTable('ocpp_chargers')
    .set({ connected: true, protocol: 'ocpp1.6', connection_id: `conn-${instanceId}`, instance_id: instanceId, last_seen_at: new Date(), boot_answered_at: new Date() })
    .where('charger_id', '=', ch.chargerId)
    .execute();
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function readyz(port: number): Promise<{ status: number; body: { error?: string; detail?: string } } | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    return { status: res.status, body: (await res.json()) as { error?: string; detail?: string } };
  } catch {
    return null; // not listening yet
  }
}

// The seed waits for its advisory lock: a test holding that lock on PostgreSQL keeps start-up in its seed step.
if (process.env.DATABASE_URL) {
  describe('GET /readyz during start-up', () => {
    it('answers 503 while the sandbox is being seeded and 200 once the demo credentials file is written', async () => {
      const db = await createTestDb(); // empty: this start seeds it
      const holder = new pg.Client({ connectionString: db.url });
      await holder.connect();
      const port = await freePort();
      let svc: TestService | undefined;
      try {
        await holder.query('select pg_advisory_lock($1, hashtext($2))', [LOCK_NAMESPACE, 'seed-sandbox']);
        const starting = createTestService({ listen: true, seed: true, db, env: { PORT: String(port) } });
        let early = await readyz(port);
        for (let i = 0; i < 600 && !early; i++) early = await new Promise((r) => setTimeout(r, 50)).then(() => readyz(port));
        expect(early).toEqual({ status: 503, body: { error: 'not_ready', detail: 'Start-up is not complete: seeding the sandbox.' } });
        await holder.query('select pg_advisory_unlock($1, hashtext($2))', [LOCK_NAMESPACE, 'seed-sandbox']);
        svc = await starting;
        expect(await readyz(port)).toEqual({ status: 200, body: { status: 'ready', database: 'pg' } });
        expect(svc.demoFile && fs.existsSync(svc.demoFile)).toBe(true);
      } finally {
        await holder.end();
        await svc?.close();
        await db.close();
      }
    });
  });
}
