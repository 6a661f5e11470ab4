// Issue 10 crash test (C4.11 acknowledged means durable; C4.8 live state after a crash). The service runs as a
// child process; many chargers (both protocols) stream transaction messages; the test SIGKILLs the service
// mid-stream and starts it again on the same database. Every reading whose message was acknowledged is stored
// exactly once, also after the chargers resend what they were sending and what was already acknowledged; the
// killed process's chargers read offline without reconnecting. On PostgreSQL and on embedded PGlite.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RPCClient } from 'ocpp-rpc';
import type { RPC_ClientOptions } from 'ocpp-rpc/lib/client.js';
import { describe, expect, it } from 'vitest';
import { createDb, type DbHandle } from '../../src/db/database.ts';
import { createTestDb } from '../helpers/db.ts';
import { bootPayload, energyValue, hourAgoTimeline, type OcppProtocol } from '../helpers/ocpp-factories.ts';
import { startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';

const CHARGERS = 24;
const KILL_AFTER_ACKS = CHARGERS * 8; // mid-stream: every charger is sending when the kill comes
const LEASE_SECONDS = 3;
const REGISTER = 'Energy.Active.Import.Register';

interface Reading {
  k: number;
  at: string;
  wh: number;
}

interface Sim {
  chargerId: string;
  identity: string;
  password: string;
  protocol: OcppProtocol;
  txId: string;
  acked: Reading[];
  /** the message on the wire when the service died (never acknowledged) */
  inflight?: Reading;
}

const { at } = hourAgoTimeline();
const readingAt = (k: number): Reading => ({ k, at: at(k / 6), wh: 1000 + 30 * k }); // every 10 s, 10.8 kW

function client(url: string, sim: Sim): RPCClient {
  // ocpp-rpc marks every option required (TOOLCHAIN.md §2)
  const opts: Partial<RPC_ClientOptions> = {
    endpoint: url.replace(/^http/, 'ws') + '/ocpp',
    identity: sim.identity,
    password: sim.password,
    protocols: [sim.protocol],
    reconnect: false,
    strictMode: false,
    callTimeoutMs: 20_000,
  };
  return new RPCClient(opts as RPC_ClientOptions);
}

/** Sends reading k as the charger's transaction message (k = 0 starts the transaction). */
async function send(cli: RPCClient, sim: Sim, r: Reading): Promise<void> {
  if (sim.protocol === 'ocpp1.6') {
    if (r.k === 0) {
      const res = (await cli.call('StartTransaction', { connectorId: 1, idTag: 'CRASH', meterStart: r.wh, timestamp: r.at })) as { transactionId: number };
      sim.txId = String(res.transactionId);
    } else {
      await cli.call('MeterValues', { connectorId: 1, transactionId: Number(sim.txId), meterValue: [energyValue('ocpp1.6', r.at, r.wh)] });
    }
    return;
  }
  await cli.call('TransactionEvent', {
    eventType: r.k === 0 ? 'Started' : 'Updated',
    timestamp: r.at,
    triggerReason: r.k === 0 ? 'Authorized' : 'MeterValuePeriodic',
    seqNo: r.k,
    transactionInfo: { transactionId: sim.txId },
    evse: { id: 1, connectorId: 1 },
    ...(r.k === 0 ? { idToken: { idToken: 'CRASH', type: 'ISO14443' } } : {}),
    meterValue: [energyValue('ocpp2.0.1', r.at, r.wh)],
  });
}

async function json(url: string, init: RequestInit & { token: string }) {
  const res = await fetch(url, { ...init, headers: { authorization: `Bearer ${init.token}`, 'content-type': 'application/json' } });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function runCrash(env: Record<string, string>, openDb: () => Promise<DbHandle>, dataDir: string, kind: 'pg' | 'pglite') {
  const first = await startServiceProcess(env);
  let second: ServiceProcess | undefined;
  try {
    expect(first.output().includes('Embedded PGlite is for trials and development')).toBe(kind === 'pglite');
    expect((await fetch(`${first.url}/readyz`)).status).toBe(200);
    const demo = JSON.parse(fs.readFileSync(path.join(dataDir, 'demo-credentials.json'), 'utf8')) as { user: { token: string } };
    const token = demo.user.token;

    const sims: Sim[] = [];
    for (let i = 0; i < CHARGERS; i++) {
      const res = await json(`${first.url}/chargers`, { method: 'POST', token, body: JSON.stringify({ nickname: `Crash ${i}`, connection_type: 'ocpp' }) });
      expect(res.status).toBe(201);
      const ocpp = res.body.ocpp as { identity: string; password: string };
      const protocol: OcppProtocol = i % 2 ? 'ocpp2.0.1' : 'ocpp1.6';
      sims.push({ chargerId: res.body.id as string, ...ocpp, protocol, txId: `crash-${crypto.randomUUID()}`, acked: [] });
    }

    // stream until the kill: each charger sends its next message as soon as the previous one was answered
    let total = 0;
    let killing: Promise<unknown> | undefined;
    // every charger is connected and booted before any streams: the kill must find them all mid-stream
    const clients = await Promise.all(
      sims.map(async (sim) => {
        const cli = client(first.url, sim);
        await cli.connect();
        await cli.call('BootNotification', bootPayload(sim.protocol));
        return cli;
      }),
    );
    const streams = sims.map(async (sim, i) => {
      const cli = clients[i]!;
      for (let k = 0; ; k++) {
        const r = readingAt(k);
        sim.inflight = r;
        try {
          await send(cli, sim, r);
        } catch {
          return; // the service is gone: this message stays unacknowledged
        }
        sim.acked.push(r);
        sim.inflight = undefined;
        if (++total >= KILL_AFTER_ACKS) killing ??= first.kill('SIGKILL');
      }
    });
    await Promise.all(streams);
    expect(await killing).toBe('SIGKILL');
    const acked = sims.reduce((n, s) => n + s.acked.length, 0);
    expect(acked).toBeGreaterThanOrEqual(KILL_AFTER_ACKS);
    expect(sims.every((s) => s.acked.length > 0)).toBe(true);

    second = await startServiceProcess(env);
    expect((await fetch(`${second.url}/readyz`)).status).toBe(200);
    // C4.8: no charger has reconnected; the killed process's lease was ended by the restart (same host, its pid
    // gone) or has lapsed (LEASE_SECONDS): none of its chargers reads online
    const list = await json(`${second.url}/chargers`, { method: 'GET', token });
    const statuses = new Map((list.body.chargers as Array<{ id: string; status: string }>).map((c) => [c.id, c.status]));
    for (const s of sims) expect(statuses.get(s.chargerId)).toBe('offline');

    // the chargers come back and resend: the unanswered message (a charger retries it) and, as a replay, the
    // last acknowledged one; both answered now, and stored once
    for (const sim of sims) {
      const cli = client(second.url, sim);
      await cli.connect();
      await cli.call('BootNotification', bootPayload(sim.protocol));
      const again = sim.acked.at(-1)!;
      if (again.k > 0 || sim.protocol === 'ocpp2.0.1') await send(cli, sim, again);
      if (sim.inflight && (sim.inflight.k > 0 || sim.protocol === 'ocpp2.0.1')) {
        await send(cli, sim, sim.inflight);
        sim.acked.push(sim.inflight);
      }
      await cli.close();
    }
    if (kind === 'pg') await checkStored(await openDb(), sims, 1); // the second process holds its lease
    expect(await second.kill('SIGTERM')).toBe(0);
    await checkStored(await openDb(), sims, 0); // a clean stop drops its lease; the killed one's is gone too
  } finally {
    await first.kill();
    await second?.kill();
  }
}

async function checkStored(h: DbHandle, sims: Sim[], leases: number): Promise<void> {
  try {
    for (const sim of sims) {
      const rows = await h.db
        .selectFrom('meter_readings')
        .select(['measured_at', 'wh'])
        .where('charger_id', '=', sim.chargerId)
        .where('measurand', '=', REGISTER)
        .where('phase', '=', '')
        .execute();
      for (const r of sim.acked) {
        const hits = rows.filter((x) => x.measured_at.toISOString().replace('.000Z', 'Z') === r.at && Number(x.wh) === r.wh);
        expect(hits, `${sim.protocol} ${sim.identity} reading ${r.k}`).toHaveLength(1);
      }
      // nothing stored twice, whatever was acknowledged
      expect(new Set(rows.map((x) => x.measured_at.getTime())).size).toBe(rows.length);
      const sessions = await h.db.selectFrom('charging_sessions').select('transaction_id').where('charger_id', '=', sim.chargerId).execute();
      expect(sessions).toEqual([{ transaction_id: sim.txId }]);
    }
    const live = await h.db.selectFrom('ocpp_instances').select('id').execute();
    expect(live).toHaveLength(leases);
  } finally {
    await h.close();
  }
}

function baseEnv(dataDir: string): Record<string, string> {
  return {
    APP_ENV: 'sandbox',
    DATA_DIR: dataDir,
    JOBS_ENABLED: 'false',
    LOG_LEVEL: 'warn',
    INSTANCE_LEASE_SECONDS: String(LEASE_SECONDS),
    RATE_LIMIT_PERSONAL_PER_MIN: '100000',
  };
}

describe('SIGKILL mid-stream and restart (issue 10)', () => {
  it('embedded PGlite: every acknowledged reading is stored once; the killed chargers read offline', { timeout: 400_000 }, async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-crash-'));
    try {
      await runCrash(baseEnv(dataDir), () => createDb({ DATA_DIR: dataDir }), dataDir, 'pglite');
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  if (process.env.DATABASE_URL) {
    it('PostgreSQL: every acknowledged reading is stored once; the killed chargers read offline', { timeout: 300_000 }, async () => {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-crash-'));
      const db = await createTestDb(); // a fresh database of its own, migrated; the child seeds it
      await db.close();
      try {
        await runCrash({ ...baseEnv(dataDir), DATABASE_URL: db.url! }, () => createDb({ DATABASE_URL: db.url!, poolSize: 2 }), dataDir, 'pg');
      } finally {
        fs.rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }
});
