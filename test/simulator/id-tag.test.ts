// A charger does not charge on an id tag the central system rejects: Authorize not Accepted → no transaction; the
// start's answer not Accepted (1.6 StartTransaction idTagInfo, 2.0.1 TransactionEvent idTokenInfo) → the transaction
// is stopped at once with reason DeAuthorized (StopTransactionOnInvalidId / StopTxOnInvalidId). The run reports each
// such session as an error and exits 1 when no session could charge. Driven through the CLI (--id-tag) against the
// bare server answering per tag.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBareServer, type BareServer } from '../../simulator/bare-server.ts';

const cli = path.resolve(import.meta.dirname, '../../simulator/cli.ts');
const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-sim-idtag-'));
let server: BareServer;
let authorizeCalls = 0;

beforeAll(async () => {
  server = await startBareServer({
    record: true,
    idTagStatus: (tag, answer) => {
      if (tag === 'BLOCKED1') return 'Blocked';
      if (tag === 'LATEINV1' && answer !== 'Authorize') return 'Invalid';
      // every second Authorize of this tag is refused (a month where some sessions charge)
      if (tag === 'SOMETIMES' && answer === 'Authorize') return ++authorizeCalls % 2 === 0 ? 'Expired' : 'Accepted';
      return 'Accepted';
    },
  });
});
afterAll(async () => {
  await server.close();
  fs.rmSync(stateDir, { recursive: true, force: true });
});

/** the CLI's exit code, stdout and stderr (a non-zero exit is a result here, not a failure) */
function simulate(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', cli, '--url', server.url, '--state-dir', stateDir, ...args],
      { cwd: path.resolve(import.meta.dirname, '../..'), env: { ...process.env, ERE_SIMULATOR_STATE_DIR: stateDir } },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
const sent = (identity: string, method?: string) => server.received.filter((r) => r.identity === identity && (!method || r.method === method));

describe('an id tag the central system rejects', () => {
  it('1.6 Authorize Blocked: no transaction, the connector free again, the session an error, exit 1', async () => {
    const r = await simulate(['--identity', 'TAG-16-A', '--scenario', 'session', '--energy', '2000', '--id-tag', 'BLOCKED1', '--json']);
    expect(r.code).toBe(1);
    const result = JSON.parse(r.stdout);
    expect(result).toMatchObject({ energyWh: 0, sessions: [], charged: 0, rejected: [{ idTag: 'BLOCKED1', status: 'Blocked', by: 'Authorize', transactionId: null }] });
    expect(result.errors.join('\n')).toMatch(/id tag BLOCKED1 Blocked \(Authorize\); not started/);
    expect(sent('TAG-16-A', 'Authorize').map((c) => c.params.idTag)).toEqual(['BLOCKED1']);
    expect(sent('TAG-16-A', 'StartTransaction')).toEqual([]);
    expect(sent('TAG-16-A', 'MeterValues')).toEqual([]);
    expect(sent('TAG-16-A', 'StatusNotification').map((c) => c.params.status)).toEqual(['Available', 'Preparing', 'Available']);
  });

  it('1.6 StartTransaction Invalid: stopped at once with reason DeAuthorized, nothing charged', async () => {
    const r = await simulate(['--identity', 'TAG-16-B', '--scenario', 'session', '--energy', '2000', '--id-tag', 'LATEINV1']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/error: TAG-16-B: session from .*: id tag LATEINV1 Invalid \(StartTransaction\); transaction stopped at once \(DeAuthorized\)/);
    expect(r.stdout).toMatch(/energy delivered: 0 Wh/);
    const [start] = sent('TAG-16-B', 'StartTransaction');
    const stops = sent('TAG-16-B', 'StopTransaction');
    expect(stops).toHaveLength(1);
    expect(stops[0]!.params).toMatchObject({ reason: 'DeAuthorized', meterStop: start!.params.meterStart, idTag: 'LATEINV1' });
    expect(sent('TAG-16-B', 'MeterValues')).toEqual([]);
    expect(sent('TAG-16-B', 'StatusNotification').map((c) => c.params.status)).not.toContain('Charging');
    expect(server.energyByIdentity().get('TAG-16-B')).toBe(0);
  });

  it('2.0.1: Authorize Blocked starts nothing; TransactionEvent Started answered Invalid is Ended (Deauthorized / DeAuthorized)', async () => {
    const a = await simulate(['--identity', 'TAG-201-A', '--protocol', 'ocpp2.0.1', '--scenario', 'session', '--energy', '2000', '--id-tag', 'BLOCKED1', '--json']);
    expect(a.code).toBe(1);
    expect(JSON.parse(a.stdout).rejected).toEqual([expect.objectContaining({ status: 'Blocked', by: 'Authorize' })]);
    expect(sent('TAG-201-A', 'Authorize').map((c) => c.params.idToken)).toEqual([{ idToken: 'BLOCKED1', type: 'ISO14443' }]);
    expect(sent('TAG-201-A', 'TransactionEvent')).toEqual([]);

    const b = await simulate(['--identity', 'TAG-201-B', '--protocol', 'ocpp2.0.1', '--scenario', 'session', '--energy', '2000', '--id-tag', 'LATEINV1', '--json']);
    expect(b.code).toBe(1);
    const result = JSON.parse(b.stdout);
    expect(result).toMatchObject({ energyWh: 0, charged: 0, rejected: [{ status: 'Invalid', by: 'TransactionEvent' }], sessions: [{ stopReason: 'DeAuthorized', energyWh: 0 }] });
    const events = sent('TAG-201-B', 'TransactionEvent').map((c) => c.params);
    expect(events.map((e) => e.eventType)).toEqual(['Started', 'Ended']);
    expect(events[1]).toMatchObject({ triggerReason: 'Deauthorized', transactionInfo: { stoppedReason: 'DeAuthorized' } });
  });

  it('a month where some sessions are refused: those are errors, the others charge, exit 0; the default tag stays SIMTAG01', async () => {
    const r = await simulate(['--identity', 'TAG-M', '--scenario', 'month', '--month', '2026-03', '--sessions', '4', '--seed', '5', '--id-tag', 'SOMETIMES', '--json']);
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.charged).toBe(2);
    expect(result.rejected).toHaveLength(2);
    expect(result.rejected.every((x: { status: string }) => x.status === 'Expired')).toBe(true);
    expect(result.errors).toHaveLength(2);
    expect(sent('TAG-M', 'StartTransaction')).toHaveLength(2);
    expect(server.energyByIdentity().get('TAG-M')).toBe(result.energyWh);

    const d = await simulate(['--identity', 'TAG-D', '--scenario', 'session', '--energy', '1000', '--json']);
    expect(d.code).toBe(0);
    expect(sent('TAG-D', 'StartTransaction').map((c) => c.params.idTag)).toEqual(['SIMTAG01']);
  });
});
