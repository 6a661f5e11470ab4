// Issue 10 item 7: the claim flow (C3.4) runs in one transaction. A failure or a crash between its steps leaves
// the draft open (never stuck in `claiming`), with no user, account or connection half made; it can be claimed
// again afterwards. Simultaneous confirmations make one user and one account; the others get 410.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, TEST_ADMIN_TOKEN, TEST_ENCRYPTION_KEY, type TestService } from '../helpers/app.ts';
import { startServiceProcess } from '../helpers/service-process.ts';
import { aPartner, type TestPartner } from '../helpers/factories.ts';
import { aPartnerCharger, anEan, postCustomers, registerEans, tokenOf } from '../helpers/partner-factories.ts';

let svc: TestService;
let partner: TestPartner;

beforeAll(async () => {
  svc = await createTestService();
  partner = await aPartner(svc.deps, { name: 'Race Laden BV' });
});
afterAll(() => svc?.close());

let seq = 0;
async function aDraft(extra: Record<string, unknown> = {}): Promise<{ path: string; draftId: string; email: string }> {
  const email = `race${++seq}-${Date.now()}@klant.nl`;
  const res = await postCustomers(svc, partner.apiKey, { consent: true, send_invite: false, customers: [{ name: `Klant ${seq}`, email, ...extra }] });
  expect(res.statusCode).toBe(200);
  const c = res.json().created[0];
  return { path: `/claim/${tokenOf(c.claim_url)}`, draftId: c.draft_id, email };
}

/** A draft with a resolved EAN and address (the claim then also makes a connection). */
async function aDraftWithConnection(extra: Record<string, unknown> = {}) {
  const ean = anEan();
  const house = String(100 + seq);
  await registerEans(svc.deps, [{ ean_code: ean, postal_code: '1017CT', house_number: house }]);
  return { ...(await aDraft({ postal_code: '1017 CT', house_number: house, city: 'Amsterdam', ...extra })), ean };
}

const confirm = (path: string) => svc.app.inject({ method: 'POST', url: path, payload: { street: 'Herengracht' } });
const draftRow = (id: string) => svc.deps.db.selectFrom('partner_drafts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const usersWith = async (email: string) => svc.deps.db.selectFrom('users').select('id').where('email', '=', email).execute();
const accountsOf = async (userId: string) => svc.deps.db.selectFrom('accounts').select('id').where('owner_user_id', '=', userId).execute();
const connectionsWith = async (ean: string) => svc.deps.db.selectFrom('connections').select(['id', 'status']).where('ean_code', '=', ean).execute();

describe('claim in one transaction', () => {
  it('a unique conflict in the middle (EAN taken meanwhile) leaves the draft open and no user; claimable after the fix', async () => {
    const d = await aDraftWithConnection();
    // another connection takes the EAN after the draft was made: the claim fails at the account step
    const taken = await anAccountWithEan(d.ean);
    const failed = await confirm(d.path);
    expect(failed.statusCode).toBe(409);
    expect((await draftRow(d.draftId)).status).toBe('open');
    expect(await usersWith(d.email)).toEqual([]); // the user made before the account step was rolled back

    await svc.deps.db.updateTable('connections').set({ status: 'archived' }).where('id', '=', taken).execute();
    const ok = await confirm(d.path);
    expect(ok.statusCode).toBe(200);
    const draft = await draftRow(d.draftId);
    expect(draft.status).toBe('claimed');
    expect((await usersWith(d.email)).map((u) => u.id)).toEqual([draft.claimed_user_id]);
    expect((await connectionsWith(d.ean)).filter((c) => c.status === 'active').map((c) => c.id)).toEqual([draft.claimed_connection_id]);
  });

  it('six simultaneous confirmations: one 200, five 410, one user, one account, one connection', async () => {
    const d = await aDraftWithConnection();
    const answers = await Promise.all(Array.from({ length: 6 }, () => confirm(d.path)));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 410, 410, 410, 410, 410]);
    const draft = await draftRow(d.draftId);
    expect(draft.status).toBe('claimed');
    expect((await usersWith(d.email)).map((u) => u.id)).toEqual([draft.claimed_user_id]);
    expect((await accountsOf(draft.claimed_user_id!)).map((a) => a.id)).toEqual([draft.claimed_account_id]);
    expect((await connectionsWith(d.ean)).map((c) => c.id)).toEqual([draft.claimed_connection_id]);
  });

  if (process.env.DATABASE_URL) {
    it('a crash mid-claim (SIGKILL of the service while it couples the charger) leaves nothing behind', async () => {
      const serial = `RACE-${Date.now()}`;
      const charger = await aPartnerCharger(svc.deps, { partnerId: partner.partnerId, brand: 'Alfen', serial });
      const d = await aDraftWithConnection({ charger_brand: 'Alfen', charger_serial: serial });
      expect((await draftRow(d.draftId)).charger_id).toBe(charger.chargerId);

      const child = await startServiceProcess({
        DATABASE_URL: svc.testDb.url, DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'ere-race-')),
        ADMIN_TOKEN: TEST_ADMIN_TOKEN, DATA_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, APP_ENV: 'sandbox', JOBS_ENABLED: 'false', LOG_LEVEL: 'warn',
      });
      const test = new pg.Client({ connectionString: svc.testDb.url });
      await test.connect();
      try {
        // hold the charger row, so the claim stops at its charger step; then kill the service process
        await test.query('begin');
        await test.query('select id from chargers where id = $1 for update', [charger.chargerId]);
        const pending = fetch(child.url + d.path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"street":"Herengracht"}' }).catch((err: unknown) => err);
        const pid = await blockedBackend(test, 'update "chargers"%');
        await child.kill('SIGKILL');
        expect(await pending).toBeInstanceOf(Error);
        // the orphaned backend goes on once the row is free, finds its client gone and rolls back
        await test.query('rollback');
        await backendGone(test, pid);
      } finally {
        await test.end();
        await child.kill('SIGKILL');
      }
      const draft = await draftRow(d.draftId);
      expect(draft).toMatchObject({ status: 'open', claimed_user_id: null, claimed_account_id: null });
      expect(await usersWith(d.email)).toEqual([]);
      expect(await connectionsWith(d.ean)).toEqual([]);

      const again = await confirm(d.path);
      expect(again.statusCode).toBe(200);
      const claimed = await draftRow(d.draftId);
      expect(claimed.status).toBe('claimed');
      const ch = await svc.deps.db.selectFrom('chargers').select(['owner_user_id', 'account_id']).where('id', '=', charger.chargerId).executeTakeFirstOrThrow();
      expect(ch).toEqual({ owner_user_id: claimed.claimed_user_id, account_id: claimed.claimed_account_id });
    });
  }
});

/** A CPO account holding the EAN (made directly: the EAN's owner is another partner's customer). */
async function anAccountWithEan(ean: string): Promise<string> {
  const a = await svc.deps.db
    .insertInto('accounts')
    .values({ partner_id: partner.partnerId, access_channel: 'cpo_api', display_name: 'Eerder', signatory_full_name: 'Eerder', signatory_email: 'eerder@klant.nl' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const c = await svc.deps.db
    .insertInto('connections')
    .values({ account_id: a.id, ean_code: ean, street: 'Elders', house_number: '1', postal_code: '1000AA', city: 'Amsterdam' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return c.id;
}

/** The pid of the backend of this database waiting on a lock in a statement like `pattern`. */
async function blockedBackend(c: pg.Client, pattern: string): Promise<number> {
  for (let i = 0; i < 500; i++) {
    // the statistics snapshot is kept for the whole transaction of `c` unless cleared
    await c.query('select pg_stat_clear_snapshot()');
    const r = await c.query<{ pid: number }>(
      `select pid from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like $1`,
      [pattern],
    );
    if (r.rows[0]) return r.rows[0].pid;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`no backend waits in ${pattern}`);
}

async function backendGone(c: pg.Client, pid: number): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const r = await c.query('select 1 from pg_stat_activity where pid = $1', [pid]);
    if (r.rowCount === 0) return;
    await new Promise((res) => setTimeout(res, 20));
  }
  throw new Error(`backend ${pid} is still there`);
}
