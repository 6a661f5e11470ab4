// Stopping the CLI (found by an outside audit of the simulator, D196/D197): the first SIGINT/SIGTERM stops a
// single-charger scenario within a second or two — the running transaction is stopped (reason Local) and stored
// as completed by the gateway with the energy the CLI prints, exit 130 / 143; a boot retry's wait (Pending, "retrying
// in 300 s") ends at once; --stay stops a session the central system started and prints its energy; a meter that
// cannot be saved at the end is said on stderr (exit 1) and not called kept.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadBundledCatalog } from '../../src/domain/catalog/load.ts';
import { startBareServer, type BareServer } from '../../simulator/bare-server.ts';
import { identitiesFor } from '../../simulator/load.ts';
import { registerChargers, type Credential } from '../../simulator/register.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aUser, bearer } from '../helpers/factories.ts';

const cli = path.resolve(import.meta.dirname, '../../simulator/cli.ts');
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-sim-signal-state-'));
let svc: TestService;
let bare: BareServer;
let ocppUrl: string;
let token: string;
let seq = 0;

beforeAll(async () => {
  svc = await createTestService({ listen: true });
  await loadBundledCatalog(svc.deps.db);
  token = (await aUser(svc.deps)).token;
  ocppUrl = svc.url.replace(/^http/, 'ws') + '/ocpp';
  bare = await startBareServer({ record: true, pendingBoots: 1000, pendingIntervalS: 300 });
});
afterAll(async () => {
  await svc?.close();
  await bare?.close();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

async function register(): Promise<Credential> {
  const { credentials } = await registerChargers({ apiUrl: svc.url, identities: identitiesFor(`SIG-${process.pid}-${++seq}-`, 1), token });
  return credentials[0]!;
}

interface Run {
  child: ChildProcess;
  out: { stdout: string; stderr: string };
  exit: Promise<{ code: number | null; at: number }>;
}

function start(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', cli, ...args], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: { ...process.env, ERE_SIMULATOR_STATE_DIR: stateDir, ...env },
  });
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d) => (out.stdout += String(d)));
  child.stderr!.on('data', (d) => (out.stderr += String(d)));
  const exit = new Promise<{ code: number | null; at: number }>((resolve) => child.on('exit', (code) => resolve({ code, at: Date.now() })));
  return { child, out, exit };
}

function waitFor(cond: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const tick = async () => {
      if (await cond()) return resolve();
      if (Date.now() - t0 > ms) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(() => void tick(), 25);
    };
    void tick();
  });
}

async function stored(identity: string) {
  const charger = await svc.deps.db.selectFrom('chargers').select('id').where('ocpp_identity', '=', identity).executeTakeFirstOrThrow();
  const rows = await svc.deps.db.selectFrom('charging_sessions').select(['energy_wh', 'status']).where('charger_id', '=', charger.id).execute();
  return { chargerId: charger.id, rows };
}

// "at once" against the waits a signal must cut short (a 146 s session, a 60 s workload, a 300 s retry): a loaded
// machine can take seconds to run the handler, so the bound is far from both
const PROMPTLY_MS = 20_000;

const printed = (stdout: string, label = 'energy delivered') => Number(new RegExp(`^${label}: (\\d+) Wh$`, 'm').exec(stdout)?.[1]);

describe('the first signal stops a single-charger run promptly', () => {
  it.each([
    ['ocpp1.6', 'SIGINT', 130, /"StopTransaction",\{[^}]*"reason":"Local"/],
    ['ocpp2.0.1', 'SIGTERM', 143, /"eventType":"Ended".*"stoppedReason":"Local"/],
  ] as const)('%s, a --realtime session, %s: the transaction stopped (reason Local) and stored with the energy printed, exit %i', { timeout: 25_000 }, async (protocol, signal, code, stopFrame) => {
    const c = await register();
    const run = start(['--url', ocppUrl, '--identity', c.identity, '--password', c.password!, '--protocol', protocol, '--scenario', 'session', '--realtime', '--energy', '300', '--meter-interval', '1', '--no-state', '--verbose']);
    // a live reading or two, then the signal (the whole session would take 146 s)
    await waitFor(() => (run.out.stderr.match(protocol === 'ocpp1.6' ? /→ \[2,"[^"]+","MeterValues"/g : /"eventType":"Updated"/g) ?? []).length >= 2, 'two live readings');
    const sentAt = Date.now();
    run.child.kill(signal);
    const { code: exitCode, at } = await run.exit;
    expect(at - sentAt).toBeLessThan(PROMPTLY_MS);
    expect(exitCode).toBe(code);
    expect(run.out.stderr).toMatch(stopFrame);
    expect(run.out.stdout).toMatch(new RegExp(`interrupted by ${signal}`));
    const wh = printed(run.out.stdout);
    expect(wh).toBeGreaterThan(0);
    const { rows } = await stored(c.identity);
    expect(rows.map((r) => [r.status, Number(r.energy_wh)])).toEqual([['completed', wh]]);
  });

  it('a boot retry wait (Pending, retrying in 300 s) ends at the first SIGINT: exit 130 with the summary', async () => {
    const run = start(['--url', bare.url, '--identity', `SIG-PENDING-${process.pid}`, '--scenario', 'boot', '--no-state', '--verbose']);
    await waitFor(() => /retrying in 300 s/.test(run.out.stderr), 'the Pending boot');
    const sentAt = Date.now();
    run.child.kill('SIGINT');
    const { code, at } = await run.exit;
    expect(at - sentAt).toBeLessThan(PROMPTLY_MS);
    expect(code).toBe(130);
    expect(run.out.stdout).toMatch(/interrupted by SIGINT/);
    expect(printed(run.out.stdout)).toBe(0);
  });
});

describe('a fleet', () => {
  it('SIGTERM ends its workload: exit 143 (a cut-short run is not a complete one); SIGINT ends its chargers\' Pending waits', async () => {
    const open = await startBareServer();
    try {
      const run = start(['--url', open.url, '--count', '2', '--prefix', `SIG-FLEET-${process.pid}-`, '--scenario', 'idle', '--duration', '60', '--verbose']);
      // the workload runs (both chargers connected): the handlers are in place
      await waitFor(() => (run.out.stderr.match(/: connected to /g) ?? []).length >= 2, 'two connected chargers');
      const sentAt = Date.now();
      run.child.kill('SIGTERM');
      const { code, at } = await run.exit;
      expect(at - sentAt).toBeLessThan(PROMPTLY_MS);
      expect(code).toBe(143);
    } finally {
      await open.close();
    }
    // every charger waiting 300 s to retry its boot: the run ends at once (the chargers never booted: exit 1)
    const pending = start(['--url', bare.url, '--count', '2', '--prefix', `SIG-FLEET-P-${process.pid}-`, '--scenario', 'idle', '--verbose']);
    await waitFor(() => (pending.out.stderr.match(/retrying in 300 s/g) ?? []).length >= 2, 'two Pending boots');
    const sentAt = Date.now();
    pending.child.kill('SIGINT');
    const { code, at } = await pending.exit;
    expect(at - sentAt).toBeLessThan(PROMPTLY_MS);
    expect(code).toBe(1);
  });
});

describe('--stay', () => {
  it('Ctrl-C during a session the central system started: stopped (reason Local), stored, its energy printed', { timeout: 25_000 }, async () => {
    const c = await register();
    const run = start(['--url', ocppUrl, '--identity', c.identity, '--password', c.password!, '--scenario', 'boot', '--stay', '--meter-interval', '1', '--no-state', '--verbose']);
    await waitFor(() => /answering the central system until Ctrl-C/.test(run.out.stderr), 'the stay');
    const { chargerId } = await stored(c.identity);
    const res = await svc.app.inject({
      method: 'POST',
      url: `/admin/chargers/${chargerId}/commands`,
      headers: bearer(TEST_ADMIN_TOKEN),
      payload: { action: 'RemoteStartTransaction', payload: { idTag: 'SIMTAG01', connectorId: 1 } },
    });
    expect(res.json()).toMatchObject({ ok: true, response: { status: 'Accepted' } });
    await waitFor(() => (run.out.stderr.match(/→ \[2,"[^"]+","MeterValues"/g) ?? []).length >= 2, 'two live readings');
    run.child.kill('SIGINT');
    const { code } = await run.exit;
    // the scenario had completed: ending --stay is its normal end
    expect(code).toBe(0);
    expect(run.out.stderr).toMatch(/"StopTransaction",\{[^}]*"reason":"Local"/);
    const wh = printed(run.out.stdout, 'energy delivered while staying');
    expect(wh).toBeGreaterThan(0);
    expect((await stored(c.identity)).rows.map((r) => [r.status, Number(r.energy_wh)])).toEqual([['completed', wh]]);
  });

  it('a meter that cannot be saved at the end is said on stderr and exits 1; "meter kept in" only after a save', async () => {
    const c = await register();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-sim-signal-save-'));
    try {
      const run = start(['--url', ocppUrl, '--identity', c.identity, '--password', c.password!, '--scenario', 'boot', '--stay', '--state-dir', dir]);
      await waitFor(() => /answering the central system until Ctrl-C/.test(run.out.stderr), 'the stay');
      // the state directory becomes a file: the save at the end fails
      fs.rmSync(dir, { recursive: true, force: true });
      fs.writeFileSync(dir, 'not a directory');
      run.child.kill('SIGINT');
      const { code } = await run.exit;
      expect(code).toBe(1);
      expect(run.out.stderr).toMatch(new RegExp(`simulate: ${c.identity}: meter state not saved to `));
      expect(run.out.stdout).not.toMatch(/meter kept in/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
