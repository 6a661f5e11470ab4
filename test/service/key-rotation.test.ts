// D251: rotating DATA_ENCRYPTION_KEY without downtime, from outside: spawned services and the admin CLI on one
// database. Step 1 every process gets the new key as a previous one; step 2 they switch (new current, old previous)
// and run side by side with step 1's, each reading what the others wrote (mandate links handed back again decrypt
// their token, a claim confirmation code e-mailed under the old key confirms); step 3 `npm run admin --
// reencrypt-data` writes everything again under the new key (counted, an unreadable row named, two runs at once);
// step 4 a process with the new key only reads everything. A process with another key, or without a key the data
// needs, is refused at start, and no key or IBAN is ever printed.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createCipher } from '../../src/lib/iban-crypto.ts';
import type { ReencryptReport } from '../../src/domain/platform/reencrypt.ts';
import { createTestDb } from '../helpers/db.ts';
import { accountBody, anEan } from '../helpers/onboarding-factories.ts';
import { nodeArgs, startServiceProcess, type ServiceProcess } from '../helpers/service-process.ts';
import { tempDirs } from '../helpers/temp-dirs.ts';

const ADMIN = 'key-rotation-admin-token-0123456789';
const base = { JOBS_ENABLED: 'false', LOG_LEVEL: 'warn', ADMIN_TOKEN: ADMIN, APP_ENV: 'sandbox' };
const tmp = tempDirs('ere-keyrot-');
const IBAN = 'NL91ABNA0417164300';
const key = () => crypto.randomBytes(32);
const b64 = (k: Buffer) => k.toString('base64');
const keysOf = (current: Buffer, ...previous: Buffer[]) => ({
  DATA_ENCRYPTION_KEY: b64(current),
  ...(previous.length ? { DATA_ENCRYPTION_KEYS_PREVIOUS: previous.map(b64).join(',') } : {}),
});

/** what `reencrypt-data` prints (its JSON report) */
type Report = ReencryptReport;

/** Every line any process or command printed, to look for keys and IBANs in. */
const printed: string[] = [];

async function run(script: string, args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const r = await promisify(execFile)(process.execPath, [...nodeArgs(script), ...args], {
    env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', ...base, ...env },
    timeout: 120_000,
  }).then(
    (x) => ({ code: 0, stdout: x.stdout, stderr: x.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
  printed.push(r.stdout, r.stderr);
  return r;
}

/** npm run admin -- reencrypt-data [...] with this environment. */
async function reencrypt(env: Record<string, string>, ...args: string[]): Promise<{ code: number; report: Report; stderr: string }> {
  const r = await run('src/cli/admin.ts', ['reencrypt-data', ...args], env);
  let report: Report;
  try {
    report = JSON.parse(r.stdout) as Report;
  } catch {
    throw new Error(`reencrypt-data printed no report (exit ${r.code}):\n${r.stdout}${r.stderr}`);
  }
  return { code: r.code, report, stderr: r.stderr };
}

const refused = (env: Record<string, string>) => run('src/main.ts', [], env).then((r) => ({ code: r.code, out: r.stdout + r.stderr }));

async function start(env: Record<string, string>): Promise<ServiceProcess> {
  const svc = await startServiceProcess({ ...base, ...env });
  started.push(svc);
  return svc;
}
const started: ServiceProcess[] = [];
async function stop(svc: ServiceProcess): Promise<void> {
  expect(await svc.kill('SIGTERM')).toBe(0);
  printed.push(svc.output());
}

async function call(url: string, method: string, route: string, body: unknown, token?: string): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  const res = await fetch(url + route, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // an HTML page
  }
  return { status: res.status, json, text };
}

interface Demo {
  partner: { api_key: string; cpo_client: { client_id: string; client_secret: string } };
}

async function cpoToken(url: string, demo: Demo): Promise<string> {
  const r = await call(url, 'POST', '/oauth/token', { grant_type: 'client_credentials', ...demo.partner.cpo_client });
  expect(r.status, r.text).toBe(200);
  return r.json.access_token as string;
}

/** POST /v1/accounts with an IBAN, then its mandate link: the two encrypted values a service writes. */
async function accountWithLink(url: string, token: string): Promise<{ connectionId: string; link: string }> {
  const a = await call(url, 'POST', '/v1/accounts', accountBody({ iban: IBAN }), token);
  expect(a.status, a.text).toBe(201);
  const l = await call(url, 'POST', '/v1/mandate-links', { connection_id: a.json.connection_id }, token);
  expect(l.status, l.text).toBe(201);
  return { connectionId: a.json.connection_id as string, link: l.json.url as string };
}

/** The open link handed back again (its token decrypted by this process): 200 with the same URL. */
async function linkAgain(url: string, token: string, made: { connectionId: string; link: string }): Promise<void> {
  const r = await call(url, 'POST', '/v1/mandate-links', { connection_id: made.connectionId }, token);
  expect(r.status, r.text).toBe(200);
  // the same token (the address names the serving process's port)
  expect(new URL(r.json.url as string).pathname).toBe(new URL(made.link).pathname);
}

describe('D251: rotating the data-encryption key', () => {
  if (process.env.DATABASE_URL) {
    it('processes of two rotation steps side by side read what the other writes; the re-encryption moves everything to the new key; then the new key alone reads it', { timeout: 420_000 }, async () => {
      const A = key();
      const B = key();
      const C = key();
      const tdb = await createTestDb();
      const db = tdb.db;
      const url = tdb.url!;
      const on = { DATABASE_URL: url };
      try {
        // before: key A only. An account with an IBAN and its mandate link; a claim for an address that is already a
        // user, whose confirmation code is e-mailed, a MAC under A
        const dir0 = tmp();
        const p0 = await start({ ...on, DATA_DIR: dir0, ...keysOf(A) });
        const demo = JSON.parse(fs.readFileSync(path.join(dir0, 'demo-credentials.json'), 'utf8')) as Demo;
        let token = await cpoToken(p0.url, demo);
        const made0 = await accountWithLink(p0.url, token);
        const drafts = await call(p0.url, 'POST', '/partner/customers', {
          consent: true,
          send_invite: false,
          customers: [{ name: 'Sanne de Vries', email: 'sanne@klant-keyrot.nl', ean: anEan(), postal_code: '3511 AB', house_number: '77', city: 'Utrecht' }],
        }, demo.partner.api_key);
        expect(drafts.status, drafts.text).toBe(200);
        expect(drafts.json.created, drafts.text).toHaveLength(1);
        // the address becomes a user's after the upload: the claim then asks its owner to confirm (D129)
        const user = await call(p0.url, 'POST', '/admin/users', { email: 'sanne@klant-keyrot.nl' }, ADMIN);
        expect(user.status, user.text).toBe(201);
        const claimPath = new URL((drafts.json.created as Array<{ claim_url: string }>)[0]!.claim_url).pathname;
        const form = { street: 'Laadpaalstraat', city: 'Utrecht', iban: IBAN };
        const asked = await call(p0.url, 'POST', claimPath, form);
        expect(asked.status, asked.text).toBe(202);
        const mail = await db.selectFrom('outbox_messages').select('body').where('kind', '=', 'claim_link_confirm').executeTakeFirstOrThrow();
        const code = decodeURIComponent(/confirm=([^&\s]+)/.exec(mail.body)![1]!);
        await stop(p0);

        // step 1 (A current, B previous) and step 2 (B current, A previous) side by side
        const step1 = keysOf(A, B);
        const step2 = keysOf(B, A);
        const p1 = await start({ ...on, DATA_DIR: tmp(), ...step1 });
        const p2 = await start({ ...on, DATA_DIR: tmp(), ...step2 });
        token = await cpoToken(p2.url, demo);
        const made1 = await accountWithLink(p1.url, token); // under A
        const made2 = await accountWithLink(p2.url, token); // under B
        for (const p of [p1, p2]) for (const m of [made0, made1, made2]) await linkAgain(p.url, token, m);
        // the code e-mailed under A confirms the claim on the process that encrypts with B
        const confirmed = await call(p2.url, 'POST', claimPath, { ...form, confirm: code });
        expect(confirmed.status, confirmed.text).toBe(200);
        const kid = (k: Buffer) => createCipher(k).keyId;
        // every encrypted value in the database: IBANs and mandate-link tokens
        const values = async () => [
          ...(await db.selectFrom('accounts').select('iban_encrypted as v').where('iban_encrypted', 'is not', null).execute()).map((r) => r.v!),
          ...(await db.selectFrom('mandate_links').select('token_encrypted as v').execute()).map((r) => r.v),
        ];
        // by the key that made it: v2 names it; v1 (written by step 0's process, which had no previous key) by its tag
        const both = createCipher(A, [B]);
        const keyOf = (v: string) => {
          try {
            return both.open(v).keyId;
          } catch {
            return null; // another key's (the row no configured key opens)
          }
        };
        const under = async (k: Buffer) => (await values()).filter((v) => keyOf(v) === kid(k)).length;
        expect((await values()).some((v) => v.startsWith('v1:'))).toBe(true);
        // three accounts through the API and one by the claim, each with an IBAN; a link for each of the four
        expect((await values()).length).toBe(8);
        expect([await under(A), await under(B)]).toEqual([4, 4]);

        // each configuration reads every IBAN and token in the database (the command's check writes nothing)
        for (const env of [step1, step2]) {
          const c = await reencrypt({ ...on, ...env }, '--check');
          expect(c.code, c.stderr).toBe(0);
          expect(c.report).toMatchObject({ mode: 'check', unreadable: 0, previous_keys_needed: true });
          expect(c.report.re_encrypted + c.report.already_current).toBe(8);
          expect(c.report.under_previous_keys).toEqual({ [env === step1 ? kid(B) : kid(A)]: 4 });
        }
        // the new key alone cannot start yet: the data still needs A
        const early = await refused({ ...on, DATA_DIR: tmp(), ...keysOf(B) });
        expect(early.code, early.out).toBe(1);
        expect(early.out).toContain(`cannot start: DATA_ENCRYPTION_KEYS_PREVIOUS: the database's data is also encrypted with key ${kid(A)}`);

        // step 3, once every process runs step 2's configuration: many rows under A, one row no key opens
        await stop(p1);
        const cipherA = createCipher(A);
        const bulk = await db
          .insertInto('accounts')
          .values(Array.from({ length: 300 }, (_, i) => ({ display_name: `Bulk ${i}`, iban_encrypted: cipherA.encrypt(IBAN) })))
          .returning('id')
          .execute();
        const lost = await db.insertInto('accounts').values({ display_name: 'Under C', iban_encrypted: createCipher(C, [B]).encrypt(IBAN) }).returning('id').executeTakeFirstOrThrow();
        const needingA = await under(A); // the bulk, and what p0 and p1 wrote
        expect(needingA).toBe(304);
        // two runs at once, in small batches, while p2 serves: each row is written once
        const runs = await Promise.all([reencrypt({ ...on, ...step2 }, '--batch-size', '7'), reencrypt({ ...on, ...step2 }, '--batch-size', '5')]);
        for (const r of runs) {
          expect(r.code, r.stderr).toBe(1); // the unreadable row
          expect(r.report.unreadable).toBe(1);
          expect(r.report.unreadable_rows).toEqual([{ table: 'accounts', id: lost.id, reason: expect.stringContaining('not configured') }]);
          expect(r.report.previous_keys_needed).toBe(false);
          expect(r.report.current_key).toBe(kid(B));
        }
        expect(runs[0]!.report.re_encrypted + runs[1]!.report.re_encrypted).toBe(needingA);
        for (const m of [made0, made1, made2]) await linkAgain(p2.url, token, m);
        // the operator clears the row nobody can read; the run again: nothing to do, and it says the old key can go
        await db.updateTable('accounts').set({ iban_encrypted: null }).where('id', '=', lost.id).execute();
        const again = await reencrypt({ ...on, ...step2 });
        expect(again.code, again.stderr).toBe(0);
        expect(again.report).toMatchObject({ re_encrypted: 0, already_current: 308, unreadable: 0, previous_keys_needed: false, keys_in_use: [kid(B)] });
        expect(again.report.summary).toContain('the previous keys can be dropped from DATA_ENCRYPTION_KEYS_PREVIOUS (step 4)');
        await stop(p2);

        // step 4: the new key alone reads every token and IBAN
        const p4 = await start({ ...on, DATA_DIR: tmp(), ...keysOf(B) });
        for (const m of [made0, made1, made2]) await linkAgain(p4.url, token, m);
        const b = createCipher(B);
        for (const row of await db.selectFrom('accounts').select('iban_encrypted').where('iban_encrypted', 'is not', null).execute()) {
          expect(b.decrypt(row.iban_encrypted!)).toBe(IBAN);
        }
        const last = await reencrypt({ ...on, ...keysOf(B) }, '--check');
        expect(last.code, last.stderr).toBe(0);
        expect(last.report).toMatchObject({ re_encrypted: 0, unreadable: 0, previous_keys_needed: false, already_current: 308 });
        expect(bulk).toHaveLength(300);

        // another key is refused, and so is the old one now
        for (const other of [C, A]) {
          const r = await refused({ ...on, DATA_DIR: tmp(), ...keysOf(other) });
          expect(r.code, r.out).toBe(1);
          expect(r.out).toContain("cannot start: DATA_ENCRYPTION_KEY: the database's data is encrypted with another key");
          expect(r.out).not.toMatch(/^\s+at /m);
        }
        expect(p4.alive()).toBe(true);
        await stop(p4);

        // nothing anywhere printed a key or an IBAN
        const all = printed.join('\n');
        for (const k of [A, B, C]) {
          expect(all).not.toContain(b64(k));
          expect(all).not.toContain(k.toString('hex'));
        }
        expect(all).not.toContain(IBAN);
        expect(all).not.toContain('NL91 ABNA');
      } finally {
        for (const s of started) await s.kill();
        await tdb.close();
      }
    });
  }

  it('on embedded PGlite (one process at a time): the switch, the re-encryption with the service stopped, the new key alone', { timeout: 300_000 }, async () => {
    const A = key();
    const B = key();
    const dir = tmp();
    const on = { DATA_DIR: dir };
    try {
      const p0 = await start({ ...on, ...keysOf(A) });
      const demo = JSON.parse(fs.readFileSync(path.join(dir, 'demo-credentials.json'), 'utf8')) as Demo;
      const token = await cpoToken(p0.url, demo);
      const made0 = await accountWithLink(p0.url, token);
      await stop(p0);

      const p2 = await start({ ...on, ...keysOf(B, A) });
      const made2 = await accountWithLink(p2.url, token);
      for (const m of [made0, made2]) await linkAgain(p2.url, token, m);
      // while the service holds the data dir the command cannot open it, and says why
      const held = await run('src/cli/admin.ts', ['reencrypt-data'], { ...on, ...keysOf(B, A) });
      expect(held.code).toBe(1);
      expect(held.stderr).toContain('DATA_DIR');
      await stop(p2);

      const r = await reencrypt({ ...on, ...keysOf(B, A) });
      expect(r.code, r.stderr).toBe(0);
      expect(r.report).toMatchObject({ re_encrypted: 2, already_current: 2, unreadable: 0, previous_keys_needed: false, keys_in_use: [createCipher(B).keyId] });

      const p4 = await start({ ...on, ...keysOf(B) });
      for (const m of [made0, made2]) await linkAgain(p4.url, token, m);
      await stop(p4);
      const other = await refused({ ...on, ...keysOf(key()) });
      expect(other.code, other.out).toBe(1);
      expect(other.out).toContain("cannot start: DATA_ENCRYPTION_KEY: the database's data is encrypted with another key");
      const all = printed.join('\n');
      for (const k of [A, B]) expect(all).not.toContain(b64(k));
      expect(all).not.toContain(IBAN);
    } finally {
      for (const s of started) await s.kill();
    }
  });
});
