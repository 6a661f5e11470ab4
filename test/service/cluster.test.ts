// WORKERS=N (src/cluster.ts): several processes on one listening port, each holding its own chargers; commands
// reach a charger whichever worker holds it and whichever serves the request; a worker that dies is replaced;
// SIGTERM stops them all. Refused on embedded PGlite.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RPCClient } from 'ocpp-rpc';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { createDb } from '../../src/db/database.ts';
import { createTestDb } from '../helpers/db.ts';
import { bootPayload, eventually } from '../helpers/ocpp-factories.ts';
import { connectOwnedCharger, startServiceProcess } from '../helpers/service-process.ts';

const ADMIN = 'cluster-test-admin-token-0123456789';

describe('WORKERS', () => {
  it('is refused on embedded PGlite, with the reason', () => {
    expect(() => loadConfig({ WORKERS: '2' })).toThrow(ConfigError);
    expect(() => loadConfig({ WORKERS: 'auto' })).toThrow(/need PostgreSQL/);
    expect(() => loadConfig({ WORKERS: 'many', DATABASE_URL: 'postgresql://x@localhost/db' })).toThrow(/WORKERS/);
    expect(loadConfig({ WORKERS: '3', DATABASE_URL: 'postgresql://x@localhost/db' }).WORKERS).toBe('3');
  });

  if (process.env.DATABASE_URL) {
    it('two workers share the port, each holds chargers, commands reach them all, a dead worker is replaced', { timeout: 180_000 }, async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-cluster-'));
      const tdb = await createTestDb();
      await tdb.close();
      const h = await createDb({ DATABASE_URL: tdb.url!, poolSize: 2 });
      const svc = await startServiceProcess({ DATABASE_URL: tdb.url!, WORKERS: '2', APP_ENV: 'sandbox', DATA_DIR: dataDir, ADMIN_TOKEN: ADMIN, JOBS_ENABLED: 'false', LOG_LEVEL: 'warn' });
      const clients: RPCClient[] = [];
      try {
        const live = () => h.db.selectFrom('ocpp_instances').select(['id', 'pid']).execute();
        await eventually(async () => expect(new Set((await live()).map((l) => l.pid)).size).toBe(2), 60_000);
        const token = await eventually(() => (JSON.parse(fs.readFileSync(path.join(dataDir, 'demo-credentials.json'), 'utf8')) as { user: { token: string } }).user.token, 30_000);

        // connect chargers until both workers hold some (the primary hands connections out in turn)
        const chargers: Array<{ id: string; identity: string }> = [];
        const holders = async () =>
          new Set((await h.db.selectFrom('ocpp_chargers').select('instance_id').where('charger_id', 'in', chargers.map((c) => c.id)).where('connected', '=', true).execute()).map((r) => r.instance_id));
        for (let i = 0; i < 16 && (chargers.length < 4 || (await holders()).size < 2); i++) {
          const { id, identity, cli } = await connectOwnedCharger(svc.url, token, `Cluster ${i}`, (c) => c.handle('TriggerMessage', async () => ({ status: 'Accepted' })));
          await cli.call('BootNotification', bootPayload('ocpp1.6'));
          clients.push(cli);
          chargers.push({ id, identity });
        }
        expect((await holders()).size).toBe(2);

        // GET /metrics speaks for the whole service whichever worker serves it: both workers' chargers are counted
        for (let i = 0; i < 4; i++) {
          const text = await (await fetch(`${svc.url}/metrics`, { headers: { connection: 'close' } })).text();
          expect(Number(/^ocpp_connected_chargers\{protocol="ocpp1\.6"\} (\d+)$/m.exec(text)?.[1])).toBe(chargers.length);
          expect(text).toMatch(/^ocpp_inbound_call_seconds_count\{protocol="ocpp1\.6",action="BootNotification"\} /m);
        }

        // every charger answers a command, whichever worker holds it and whichever serves the request
        for (const c of chargers) {
          const res = await fetch(`${svc.url}/admin/chargers/${c.id}/commands`, {
            method: 'POST',
            headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
            body: JSON.stringify({ action: 'TriggerMessage', payload: { requestedMessage: 'Heartbeat' } }),
          });
          expect(res.status, await res.clone().text()).toBe(200);
          expect(await res.json()).toMatchObject({ response: { status: 'Accepted' } });
        }

        // a worker killed outright is replaced by a new one
        const boots = async () => {
          const text = await (await fetch(`${svc.url}/metrics`, { headers: { connection: 'close' } })).text();
          return { text, n: Number(/^ocpp_inbound_call_seconds_count\{protocol="ocpp1\.6",action="BootNotification"\} (\d+)$/m.exec(text)?.[1]) };
        };
        expect((await boots()).n).toBe(chargers.length);
        const [victim] = await live();
        process.kill(victim!.pid, 'SIGKILL');
        await eventually(async () => {
          const pids = (await live()).map((l) => l.pid).filter((p) => p !== victim!.pid);
          expect(new Set(pids).size).toBe(2);
        }, 60_000);
        expect(svc.alive()).toBe(true);
        // D216: the dead worker's counters stay in the service's sums (they fell to the survivor's share: a counter
        // reset to Prometheus), and the replacement is counted
        await eventually(async () => {
          const after = await boots();
          expect(after.n).toBe(chargers.length);
          expect(after.text).toMatch(/^cluster_worker_restarts_total 1$/m);
          expect(after.text).toMatch(/^cluster_workers\{state="answered"\} 2$/m);
        }, 30_000);
      } catch (err) {
        // the service's own lines (a worker's exit and its reason are error lines) travel with the failure
        throw Object.assign(err as Error, { message: `${(err as Error).message}\n--- the service's output ---\n${svc.output().slice(-20_000)}` });
      } finally {
        await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
        // SIGTERM to the primary stops every worker cleanly
        expect(await svc.kill('SIGTERM')).toBe(0);
        await h.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }
});
