// Charger passwords (issue 10 item 8): an operator registers a charger with the password it already has or sets
// one; the gateway rotates one over OCPP (1.6 ChangeConfiguration AuthorizationKey hex-encoded, 2.0.1 SetVariables
// SecurityCtrlr.BasicAuthPassword), the old password valid until the charger connects with the new one.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAdminCli } from '../../src/cli/admin.ts';
import { ChargePoint } from '../../simulator/charge-point.ts';
import { createTestService, TEST_ADMIN_TOKEN, type TestService } from '../helpers/app.ts';
import { aUser } from '../helpers/factories.ts';
import { anOcppCharger, connectCharger, ocppClient, ocppUrl, type TestCharger } from '../helpers/ocpp-factories.ts';

let svc: TestService;
let user: { userId: string };
const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

beforeAll(async () => {
  svc = await createTestService({ listen: true, env: { OCPP_CALL_TIMEOUT_SECONDS: '1' } });
  user = await aUser(svc.deps);
});
afterAll(async () => {
  await svc.close();
});

/** connects with this password (no boot) and closes at once; the HTTP status of a refusal, or 101 */
async function tryConnect(identity: string, password: string, protocol = 'ocpp1.6'): Promise<number> {
  const cli = ocppClient(svc, identity, password, [protocol]);
  try {
    await cli.connect();
    await cli.close();
    return 101;
  } catch (err) {
    return (err as { code?: number }).code ?? 0;
  }
}

const rotate = (chargerId: string, body?: Record<string, unknown>) =>
  svc.app.inject({ method: 'POST', url: `/admin/chargers/${chargerId}/password/rotate`, headers: admin, ...(body ? { payload: body } : {}) });

async function storedPasswords(chargerId: string) {
  return svc.deps.db.selectFrom('chargers').select(['password_hash', 'pending_password_hash']).where('id', '=', chargerId).executeTakeFirstOrThrow();
}

describe('operator-set passwords', () => {
  it('registers a charger for a user with the password it already has, never echoing it', async () => {
    const imported = 'Fleet-Import-Pass:0001';
    const res = await svc.app.inject({
      method: 'POST',
      url: `/admin/users/${user.userId}/chargers`,
      headers: admin,
      payload: { nickname: 'Imported', ocpp_identity: `IMP-${Date.now()}`, password: imported },
    });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body.ocpp).toEqual({ identity: expect.any(String), endpoint: ocppUrl(svc) });
    expect(res.body).not.toContain(imported);
    expect(await tryConnect(body.ocpp.identity, imported)).toBe(101);
    expect(await tryConnect(body.ocpp.identity, 'another-password-16')).toBe(401);

    const generated = await svc.app.inject({ method: 'POST', url: `/admin/users/${user.userId}/chargers`, headers: admin, payload: { nickname: 'Generated' } });
    expect(generated.statusCode).toBe(201);
    expect(await tryConnect(generated.json().ocpp.identity, generated.json().ocpp.password)).toBe(101);
  });

  it('refuses passwords outside 16–40 printable characters and unknown users or chargers', async () => {
    for (const password of ['short-password', 'x'.repeat(41), 'has a space in it 123', 'tab\there-0123456789']) {
      const res = await svc.app.inject({ method: 'POST', url: `/admin/users/${user.userId}/chargers`, headers: admin, payload: { nickname: 'N', password } });
      expect(res.statusCode, password).toBe(400);
    }
    const noUser = await svc.app.inject({ method: 'POST', url: '/admin/users/00000000-0000-4000-8000-000000000000/chargers', headers: admin, payload: { nickname: 'N' } });
    expect(noUser.statusCode).toBe(404);
    const noCharger = await svc.app.inject({ method: 'PUT', url: '/admin/chargers/nope/password', headers: admin, payload: { password: 'p'.repeat(20) } });
    expect(noCharger.statusCode).toBe(404);
    const noAuth = await svc.app.inject({ method: 'PUT', url: '/admin/chargers/nope/password', payload: { password: 'p'.repeat(20) } });
    expect(noAuth.statusCode).toBe(401);
  });

  it('PUT …/password replaces the current password at once', async () => {
    const ch = await anOcppCharger(svc, user);
    const res = await svc.app.inject({ method: 'PUT', url: `/admin/chargers/${ch.chargerId}/password`, headers: admin, payload: { password: 'operator-chosen-pw-001' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ charger_id: ch.chargerId, identity: ch.identity, password_changed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) });
    expect(await tryConnect(ch.identity, 'operator-chosen-pw-001')).toBe(101);
    expect(await tryConnect(ch.identity, ch.password)).toBe(401);
  });
});

describe('rotation over OCPP', () => {
  it('1.6: sends AuthorizationKey hex-encoded; the old password works until the new one is used, then never again', async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    const seen: Array<{ key: string; value: string }> = [];
    cli.handle('ChangeConfiguration', async ({ params }) => {
      seen.push(params as { key: string; value: string });
      return { status: 'Accepted' };
    });
    let next: string;
    try {
      const res = await rotate(ch.chargerId);
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toMatchObject({ ok: true, action: 'ChangeConfiguration', response: { status: 'Accepted' }, rotated: true });
      next = body.password;
      expect(next).toMatch(/^[A-Za-z0-9*\-_=:+|@.]{20}$/);
      expect(seen).toEqual([{ key: 'AuthorizationKey', value: Buffer.from(next).toString('hex') }]);
    } finally {
      await cli.close();
    }
    // C0.6: the command row no longer carries the password
    const rows = await svc.deps.db.selectFrom('ocpp_commands').select('payload').where('charger_id', '=', ch.chargerId).execute();
    expect(JSON.stringify(rows)).not.toContain(Buffer.from(next).toString('hex'));
    // a reconnect before the charger uses the new password: the old one still works
    expect(await tryConnect(ch.identity, ch.password)).toBe(101);
    expect((await storedPasswords(ch.chargerId)).pending_password_hash).not.toBeNull();
    // the charger connects with the new one: from now on it is the only one
    expect(await tryConnect(ch.identity, next)).toBe(101);
    expect((await storedPasswords(ch.chargerId)).pending_password_hash).toBeNull();
    expect(await tryConnect(ch.identity, ch.password)).toBe(401);
    expect(await tryConnect(ch.identity, next)).toBe(101);
  });

  it('2.0.1: sends SetVariables BasicAuthPassword with the password the operator chose; plain encoding for 1.6 on request', async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp2.0.1');
    const seen: unknown[] = [];
    cli.handle('SetVariables', async ({ params }) => {
      seen.push(params);
      return { setVariableResult: [{ attributeStatus: 'Accepted', component: { name: 'SecurityCtrlr' }, variable: { name: 'BasicAuthPassword' } }] };
    });
    const chosen = 'Chosen-By-Operator-2024';
    try {
      const res = await rotate(ch.chargerId, { password: chosen });
      expect(res.json()).toMatchObject({ ok: true, action: 'SetVariables', rotated: true, password: chosen });
      expect(seen).toEqual([{ setVariableData: [{ component: { name: 'SecurityCtrlr' }, variable: { name: 'BasicAuthPassword' }, attributeValue: chosen }] }]);
    } finally {
      await cli.close();
    }
    const rows = await svc.deps.db.selectFrom('ocpp_commands').select('payload').where('charger_id', '=', ch.chargerId).execute();
    expect(JSON.stringify(rows)).not.toContain(chosen);
    expect(JSON.stringify(rows)).toContain('BasicAuthPassword');
    expect(await tryConnect(ch.identity, chosen, 'ocpp2.0.1')).toBe(101);
    expect(await tryConnect(ch.identity, ch.password, 'ocpp2.0.1')).toBe(401);

    const c16 = await anOcppCharger(svc, user);
    const cli16 = await connectCharger(svc, c16, 'ocpp1.6');
    const values: string[] = [];
    cli16.handle('ChangeConfiguration', async ({ params }) => {
      values.push((params as { value: string }).value);
      return { status: 'Accepted' };
    });
    try {
      const res = await rotate(c16.chargerId, { authorization_key_encoding: 'plain' });
      expect(values).toEqual([res.json().password]);
    } finally {
      await cli16.close();
    }
  });

  it('Rejected keeps the old password and answers the charger verdict', async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    cli.handle('ChangeConfiguration', async () => ({ status: 'Rejected' }));
    const before = await storedPasswords(ch.chargerId);
    try {
      const res = await rotate(ch.chargerId, { password: 'would-be-new-password' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ok: true, action: 'ChangeConfiguration', response: { status: 'Rejected' }, rotated: false });
      // D165: the CLI prints the answer and exits 1, saying the password did not change
      const out: string[] = [];
      const err: string[] = [];
      const code = await runAdminCli(['rotate-charger-password', ch.chargerId], { ADMIN_TOKEN: TEST_ADMIN_TOKEN, ADMIN_URL: svc.url }, { out: (t) => out.push(t), err: (t) => err.push(t) });
      expect(code).toBe(1);
      expect(JSON.parse(out.at(-1)!)).toMatchObject({ rotated: false, response: { status: 'Rejected' } });
      expect(err.at(-1)).toContain('refused the new password');
    } finally {
      await cli.close();
    }
    expect(await storedPasswords(ch.chargerId)).toEqual(before);
    expect(await tryConnect(ch.identity, 'would-be-new-password')).toBe(401);
    expect(await tryConnect(ch.identity, ch.password)).toBe(101);
  });

  it('the general command route refuses to set a charger password (it would be stored as sent and never hashed)', async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    let asked = 0;
    cli.handle('ChangeConfiguration', async () => {
      asked += 1;
      return { status: 'Accepted' };
    });
    const command = (action: string, payload: unknown) =>
      svc.app.inject({ method: 'POST', url: `/admin/chargers/${ch.chargerId}/commands`, headers: admin, payload: { action, payload } });
    try {
      for (const key of ['AuthorizationKey', 'authorizationkey']) {
        const res = await command('ChangeConfiguration', { key, value: 'plain-text-secret-1234' });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ error: 'invalid_request', detail: expect.stringContaining('password/rotate') });
      }
      const v201 = await command('SetVariables', { setVariableData: [{ component: { name: 'SecurityCtrlr' }, variable: { name: 'BasicAuthPassword' }, attributeValue: 'plain-text-secret-1234' }] });
      expect(v201.statusCode).toBe(400);
      // another key still goes through
      expect((await command('ChangeConfiguration', { key: 'HeartbeatInterval', value: '300' })).json()).toMatchObject({ ok: true, response: { status: 'Accepted' } });
    } finally {
      await cli.close();
    }
    expect(asked).toBe(1);
    const rows = await svc.deps.db.selectFrom('ocpp_commands').select('payload').where('charger_id', '=', ch.chargerId).execute();
    expect(JSON.stringify(rows)).not.toContain('plain-text-secret-1234');
  });

  it('offline → 409 charger_offline; no answer → 504 charger_timeout, and the charger may use either password', async () => {
    const ch = await anOcppCharger(svc, user);
    const cli = await connectCharger(svc, ch, 'ocpp1.6');
    await cli.close();
    const offline = await rotate(ch.chargerId, { password: 'never-sent-password-1' });
    expect(offline.statusCode).toBe(409);
    expect(offline.json().error).toBe('charger_offline');
    expect((await storedPasswords(ch.chargerId)).pending_password_hash).toBeNull();

    const silent = await connectCharger(svc, ch, 'ocpp1.6');
    silent.handle('ChangeConfiguration', () => new Promise(() => {}));
    try {
      const res = await rotate(ch.chargerId, { password: 'maybe-applied-pass-01' });
      expect(res.statusCode).toBe(504);
      expect(res.json().error).toBe('charger_timeout');
    } finally {
      await silent.close({ force: true }); // its handler never settles
    }
    expect(await tryConnect(ch.identity, ch.password)).toBe(101);
    expect(await tryConnect(ch.identity, 'maybe-applied-pass-01')).toBe(101);
    expect(await tryConnect(ch.identity, ch.password)).toBe(401);
  });

  it('the simulator adopts a rotated password for its next connection (1.6 and 2.0.1)', async () => {
    for (const protocol of ['ocpp1.6', 'ocpp2.0.1'] as const) {
      const ch: TestCharger = await anOcppCharger(svc, user);
      const cp = new ChargePoint({ url: ocppUrl(svc), identity: ch.identity, password: ch.password, protocol, heartbeats: false, autoReconnect: false });
      await cp.connect();
      await cp.boot();
      try {
        const res = await rotate(ch.chargerId);
        expect(res.json(), protocol).toMatchObject({ rotated: true });
        expect(cp.opts.password).toBe(res.json().password);
        await cp.close();
        await cp.connect();
        expect(await tryConnect(ch.identity, ch.password, protocol)).toBe(401);
      } finally {
        await cp.close();
      }
    }
  });
});

describe('admin CLI', () => {
  it('registers, sets and rotates a charger password, reading it from a file, never from the command line', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ere-cli-pw-'));
    const pwFile = path.join(dir, 'pw');
    fs.writeFileSync(pwFile, 'imported-from-file-0001\n');
    const out: string[] = [];
    const err: string[] = [];
    const cli = (...argv: string[]) =>
      runAdminCli(argv, { ADMIN_TOKEN: TEST_ADMIN_TOKEN, ADMIN_URL: svc.url }, { out: (t) => out.push(t), err: (t) => err.push(t) });
    const identity = `CLI-${Date.now()}`;
    expect(await cli('register-charger', user.userId, '--nickname', 'Imported', '--identity', identity, '--password-file', pwFile)).toBe(0);
    const chargerId = JSON.parse(out.at(-1)!).charger_id as string;
    expect(out.join('\n')).not.toContain('imported-from-file-0001');
    expect(await tryConnect(identity, 'imported-from-file-0001')).toBe(101);

    fs.writeFileSync(pwFile, 'set-by-the-cli-000002');
    expect(await cli('set-charger-password', chargerId, '--password-file', pwFile)).toBe(0);
    expect(await tryConnect(identity, 'set-by-the-cli-000002')).toBe(101);

    // offline charger: the rotation fails with the C6.6 error and a non-zero exit code
    expect(await cli('rotate-charger-password', chargerId)).toBe(1);
    expect(err.at(-1)).toContain('charger_offline');
    expect(await cli('set-charger-password', chargerId)).toBe(2);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
