// POST /v1/accounts and GET /v1/accounts (spec §4.1, C2.1, C0.6): every rule and error on the real route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { accountBody, anAccount, anEan, aSignedMandate } from '../helpers/onboarding-factories.ts';

describe('POST /v1/accounts', () => {
  let svc: TestService;
  let partner: TestPartner;
  let other: TestPartner;
  let token: string;
  const clock = testClock('2026-11-22T10:00:00Z');

  beforeAll(async () => {
    svc = await createTestService({ clock });
    partner = await aPartner(svc.deps);
    other = await aPartner(svc.deps);
    token = await partner.cpoToken();
  });
  afterAll(() => svc.close());

  const post = (payload: unknown, t = token) =>
    svc.app.inject({ method: 'POST', url: '/v1/accounts', headers: bearer(t), payload: payload as object });
  const accountRows = (ref: string) => svc.deps.db.selectFrom('accounts').selectAll().where('cpo_external_ref', '=', ref).execute();
  const countAccounts = async () => Number((await svc.deps.db.selectFrom('accounts').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);

  it('creates a concept account: first-response shape, stored rows, IBAN encrypted and never returned', async () => {
    const body = accountBody({ iban: ' nl91 abna 0417 1643 00 ', type: 'zakelijk', payout_handler: 'via_cpo_invoicing' });
    const res = await post(body);
    expect(res.statusCode).toBe(201);
    const j = res.json();
    expect(j).toEqual({
      ok: true,
      account_id: expect.any(String),
      connection_id: expect.any(String),
      location_id: expect.any(String),
      ean_validation_status: 'matched',
      iban_stored: true,
      mandate_status: 'pending',
      account: {
        id: j.account_id,
        type: 'zakelijk',
        display_name: 'Fam. de Vries',
        payout_handler: 'via_cpo_invoicing',
        cpo_external_ref: body.cpo_external_ref,
        created_at: '2026-11-22T10:00:00Z',
      },
    });
    expect(res.body).not.toMatch(/NL91|iban"/i);
    const [acc] = await accountRows(body.cpo_external_ref as string);
    expect(acc).toMatchObject({ partner_id: partner.partnerId, access_channel: 'cpo_api', type: 'zakelijk', signatory_full_name: 'Jan de Vries', signatory_email: 'jan@devries-test.nl', signatory_phone: '+31612345678' });
    expect(acc!.iban_encrypted).toMatch(/^v1:/);
    expect(acc!.iban_encrypted).not.toContain('NL91');
    expect(svc.deps.cipher.decrypt(acc!.iban_encrypted!)).toBe('NL91ABNA0417164300');
    const conn = await svc.deps.db.selectFrom('connections').selectAll().where('id', '=', j.connection_id).executeTakeFirstOrThrow();
    expect(conn).toMatchObject({
      account_id: j.account_id,
      location_id: j.location_id,
      ean_code: (body.connection as { ean_code: string }).ean_code,
      status: 'active',
      registration_status: 'concept',
      ean_validation_status: 'matched',
      mandate_status: 'pending',
      mandate_valid_from: null,
      street: 'Laadpaalstraat',
      postal_code: '3511 AB',
    });
  });

  it('applies defaults (particulier, joulo_pays_customer) and iban_stored false without an IBAN', async () => {
    const body = accountBody({ type: undefined, payout_handler: undefined, iban: null });
    const res = await post(body);
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ iban_stored: false, account: { type: 'particulier', payout_handler: 'joulo_pays_customer' } });
    const [acc] = await accountRows(body.cpo_external_ref as string);
    expect(acc!.iban_encrypted).toBeNull();
  });

  it('treats an empty IBAN string as absent', async () => {
    const body = accountBody({ iban: '   ' });
    const res = await post(body);
    expect(res.statusCode).toBe(201);
    expect(res.json().iban_stored).toBe(false);
    expect((await accountRows(body.cpo_external_ref as string))[0]!.iban_encrypted).toBeNull();
  });

  it('trims display_name and cpo_external_ref to 120 characters', async () => {
    const long = 'R'.repeat(130);
    const res = await post(accountBody({ display_name: `  ${'D'.repeat(150)}  `, cpo_external_ref: `  ${long}` }));
    expect(res.statusCode).toBe(201);
    const j = res.json();
    expect(j.account.display_name).toBe('D'.repeat(120));
    expect(j.account.cpo_external_ref).toBe('R'.repeat(120));
    const row = await svc.deps.db.selectFrom('accounts').selectAll().where('id', '=', j.account_id).executeTakeFirstOrThrow();
    expect(row.display_name).toHaveLength(120);
    expect(row.cpo_external_ref).toHaveLength(120);
    // the trimmed key is the idempotency key
    const again = await post(accountBody({ cpo_external_ref: long }));
    expect(again.statusCode).toBe(200);
    expect(again.json().account_id).toBe(j.account_id);
  });

  it('rule 1–3: a re-post returns the existing account (idempotent), stores a new IBAN and ignores every other field', async () => {
    const first = await anAccount(svc, partner, { iban: null });
    const before = await countAccounts();
    const res = await post({
      ...accountBody({ cpo_external_ref: first.cpo_external_ref, iban: 'DE89 3704 0044 0532 0130 00', display_name: 'Other name', type: 'vve' }),
    });
    expect(res.statusCode).toBe(200);
    const j = res.json();
    expect(j).toEqual({
      ok: true,
      idempotent: true,
      account_id: first.account_id,
      mandate_status: 'pending',
      iban_stored: true,
      account: expect.objectContaining({ id: first.account_id, type: 'particulier', display_name: 'Fam. de Vries' }),
    });
    expect(j).not.toHaveProperty('connection_id');
    expect(j).not.toHaveProperty('location_id');
    expect(j).not.toHaveProperty('ean_validation_status');
    expect(await countAccounts()).toBe(before);
    const row = await svc.deps.db.selectFrom('accounts').selectAll().where('id', '=', first.account_id).executeTakeFirstOrThrow();
    expect(row.type).toBe('particulier');
    expect(row.display_name).toBe('Fam. de Vries');
    expect(svc.deps.cipher.decrypt(row.iban_encrypted!)).toBe('DE89370400440532013000');
    const conns = await svc.deps.db.selectFrom('connections').select(['ean_code']).where('account_id', '=', first.account_id).execute();
    expect(conns).toEqual([{ ean_code: first.ean_code }]);
  });

  it('rule 3: a re-post reports the current mandate_status (active once signed)', async () => {
    const first = await anAccount(svc, partner);
    await aSignedMandate(svc, first.connection_id, { partner });
    const res = await post(accountBody({ cpo_external_ref: first.cpo_external_ref, iban: null }));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ idempotent: true, mandate_status: 'active', iban_stored: false });
  });

  it('rule 2: a re-post must still pass the body checks', async () => {
    const first = await anAccount(svc, partner);
    const res = await post(accountBody({ cpo_external_ref: first.cpo_external_ref, iban: 'NL91-ABNA' }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'invalid_iban', detail: expect.any(String) });
  });

  it('the same cpo_external_ref at another partner is another account', async () => {
    const first = await anAccount(svc, partner);
    const res = await post(accountBody({ cpo_external_ref: first.cpo_external_ref }), await other.cpoToken());
    expect(res.statusCode).toBe(201);
    expect(res.json().account_id).not.toBe(first.account_id);
  });

  it('rule 4: an EAN already registered (by anyone) gives 409 ean_in_use and stores nothing', async () => {
    const first = await anAccount(svc, partner);
    const before = await countAccounts();
    const mine = await post(accountBody({ connection: { ean_code: first.ean_code } }));
    expect(mine.statusCode).toBe(409);
    expect(mine.json()).toEqual({ error: 'ean_in_use', detail: expect.any(String) });
    const theirs = await post(accountBody({ connection: { ean_code: first.ean_code } }), await other.cpoToken());
    expect(theirs.statusCode).toBe(409);
    expect(theirs.json().error).toBe('ean_in_use');
    expect(await countAccounts()).toBe(before);
  });

  it('rule 5 (sandbox): the address check does not run; any 18-digit EAN is accepted as matched', async () => {
    const res = await post(accountBody({ connection: { ean_code: '123456789012345678' } }));
    expect(res.statusCode).toBe(201);
    expect(res.json().ean_validation_status).toBe('matched');
  });

  it.each([
    ['invalid_type', { type: 'bedrijf' }],
    ['invalid_payout_handler', { payout_handler: 'cpo_pays' }],
    ['invalid_iban', { iban: 'NL91ABNA04' }],
    ['invalid_iban', { iban: 'NL91ABNA0417164300!' }],
    ['invalid_iban', { iban: 12345 }],
    ['person_required', { person: undefined }],
    ['person_required', { person: { full_name: '   ' } }],
    ['invalid_ean', { connection: { ean_code: '87112345' } }],
    ['invalid_ean', { connection: { ean_code: undefined } }],
    ['invalid_ean', { connection: { ean_code: '87100000000000000A' } }],
    ['address_required', { connection: { city: '' } }],
    ['address_required', { connection: { street: undefined } }],
  ])('400 %s for %j, nothing stored', async (code, override) => {
    const body = accountBody(override as Record<string, unknown>);
    if ('person' in (override as object) && (override as { person?: unknown }).person === undefined) delete body.person;
    const res = await post(body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: code, detail: expect.any(String) });
    expect(await accountRows(body.cpo_external_ref as string)).toHaveLength(0);
  });

  it('checks the body in the order of the spec (invalid_type before person_required)', async () => {
    const res = await post({ type: 'x', payout_handler: 'y' });
    expect(res.json().error).toBe('invalid_type');
  });

  it('400 invalid_json for a malformed body', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/v1/accounts',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: '{"person": ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_json');
  });

  it('needs cpo:accounts:write', async () => {
    const readOnly = await partner.cpoToken(['cpo:accounts:read']);
    const res = await post(accountBody(), readOnly);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'Insufficient scope', required_scope: 'cpo:accounts:write' });
  });

  it('race: ten concurrent posts with one cpo_external_ref create one account', async () => {
    const body = accountBody();
    const results = await Promise.all(Array.from({ length: 10 }, () => post(body)));
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.json().account_id)).size).toBe(1);
    expect(await accountRows(body.cpo_external_ref as string)).toHaveLength(1);
    const id = results[0]!.json().account_id;
    expect(await svc.deps.db.selectFrom('connections').select('id').where('account_id', '=', id).execute()).toHaveLength(1);
  });

  it('race: two concurrent creates with one EAN give one 201 and one 409 ean_in_use', async () => {
    const ean = anEan();
    const a = accountBody({ connection: { ean_code: ean } });
    const b = accountBody({ connection: { ean_code: ean } });
    const [ra, rb] = await Promise.all([post(a), post(b, await other.cpoToken())]);
    expect([ra.statusCode, rb.statusCode].sort()).toEqual([201, 409]);
    const loser = ra.statusCode === 409 ? ra : rb;
    expect(loser.json().error).toBe('ean_in_use');
    const conns = await svc.deps.db.selectFrom('connections').select('account_id').where('ean_code', '=', ean).execute();
    expect(conns).toHaveLength(1);
    // the losing account was rolled back with its connection
    const loserRef = (ra.statusCode === 409 ? a : b).cpo_external_ref as string;
    expect(await accountRows(loserRef)).toHaveLength(0);
  });
});

describe('GET /v1/accounts', () => {
  let svc: TestService;
  let partner: TestPartner;
  let other: TestPartner;

  beforeAll(async () => {
    svc = await createTestService();
    partner = await aPartner(svc.deps);
    other = await aPartner(svc.deps);
  });
  afterAll(() => svc.close());

  const get = async (qs = '', p = partner) =>
    svc.app.inject({ method: 'GET', url: `/v1/accounts${qs}`, headers: bearer(await p.cpoToken(['cpo:accounts:read'])) });

  it('lists only CPO-API accounts of the caller, with signatory and every connection (archived included)', async () => {
    const a1 = await anAccount(svc, partner, { person: { email: 'a1@klant-test.nl' } });
    const a2 = await anAccount(svc, partner);
    await anAccount(svc, other);
    // an archived connection and a newer active one on a1
    await svc.deps.db.updateTable('connections').set({ status: 'archived' }).where('id', '=', a1.connection_id).execute();
    const second = await svc.deps.db
      .insertInto('connections')
      .values({ account_id: a1.account_id, ean_code: anEan(), street: 'Nieuwstraat', house_number: '2', postal_code: '1000AA', city: 'Amsterdam' })
      .returning('id')
      .executeTakeFirstOrThrow();
    // an account of this partner that did not come through the CPO API is not listed
    await svc.deps.db.insertInto('accounts').values({ partner_id: partner.partnerId, access_channel: 'partner_claim' }).execute();

    const res = await get();
    expect(res.statusCode).toBe(200);
    const j = res.json();
    expect(j).toMatchObject({ limit: 50, offset: 0, count: 2 });
    expect(j.accounts.map((a: { id: string }) => a.id)).toEqual([a1.account_id, a2.account_id]);
    const first = j.accounts[0];
    expect(first).toEqual({
      id: a1.account_id,
      type: 'particulier',
      display_name: 'Fam. de Vries',
      cpo_external_ref: a1.cpo_external_ref,
      payout_handler: 'joulo_pays_customer',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      access_channel: 'cpo_api',
      signatory: { full_name: 'Jan de Vries', email: 'a1@klant-test.nl' },
      connections: [
        {
          connection_id: a1.connection_id,
          ean_code: a1.ean_code,
          status: 'archived',
          registration_status: 'concept',
          ean_validation_status: 'matched',
          mandate_status: 'pending',
          mandate_valid_from: null,
        },
        expect.objectContaining({ connection_id: second.id, status: 'active' }),
      ],
    });
    expect(res.body).not.toMatch(/iban/i);
  });

  it('filters by cpo_external_ref, pages with limit/offset and counts the total', async () => {
    const a = await anAccount(svc, partner);
    const one = await get(`?cpo_external_ref=${encodeURIComponent(a.cpo_external_ref)}`);
    expect(one.json()).toMatchObject({ count: 1, accounts: [{ id: a.account_id }] });
    const page = await get('?limit=1&offset=1');
    const j = page.json();
    expect(j.limit).toBe(1);
    expect(j.offset).toBe(1);
    expect(j.accounts).toHaveLength(1);
    expect(j.count).toBe(3);
    const none = await get('?cpo_external_ref=does-not-exist');
    expect(none.json()).toEqual({ accounts: [], limit: 50, offset: 0, count: 0 });
  });

  it('tenancy: another partner sees none of these accounts', async () => {
    const a = await anAccount(svc, partner);
    const res = await get(`?cpo_external_ref=${encodeURIComponent(a.cpo_external_ref)}`, other);
    expect(res.json().count).toBe(0);
  });

  it.each(['?limit=0', '?limit=201', '?offset=-1'])('400 invalid_request for %s (C6.3)', async (qs) => {
    const res = await get(qs);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_request');
  });

  it('needs cpo:accounts:read', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/v1/accounts', headers: bearer(await partner.cpoToken(['cpo:accounts:write'])) });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ error: 'Insufficient scope', required_scope: 'cpo:accounts:read' });
  });

});

describe('cpo_external_ref is normalised alike on every route that takes it (trim, cut to 120, trim)', () => {
  let svc: TestService;
  let partner: TestPartner;
  let token: string;

  beforeAll(async () => {
    svc = await createTestService({ clock: testClock('2026-11-22T10:00:00Z') });
    partner = await aPartner(svc.deps);
    token = await partner.cpoToken();
  });
  afterAll(() => svc.close());

  const inject = (method: 'GET' | 'POST', url: string, payload?: object) => svc.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });

  it.each([
    ['130 characters', 'L'.repeat(130)],
    ['a space as the 120th character', `${'a'.repeat(119)} bbbbbbbbbbb`],
  ])('a ref of %s: created, then found by GET /v1/accounts, GET /v1/ere-positions, sessions:batch and connections:update', async (_, ref) => {
    const created = await inject('POST', '/v1/accounts', accountBody({ cpo_external_ref: ref }));
    expect(created.statusCode).toBe(201);
    const accountId = created.json().account_id as string;
    const connectionId = created.json().connection_id as string;
    expect((await inject('POST', '/v1/accounts', accountBody({ cpo_external_ref: ref }))).json()).toMatchObject({ idempotent: true, account_id: accountId });

    const q = `cpo_external_ref=${encodeURIComponent(ref)}`;
    const listed = (await inject('GET', `/v1/accounts?${q}`)).json();
    expect.soft(listed).toMatchObject({ count: 1, accounts: [{ id: accountId }] });

    const positions = (await inject('GET', `/v1/ere-positions?${q}`)).json();
    expect.soft(positions).toMatchObject({ count: 1, positions: [{ account_id: accountId }] });

    const batch = await inject('POST', '/v1/sessions:batch', { items: [{ cpo_external_ref: ref, month: '2026-10', kwh: 12 }] });
    expect.soft(batch.statusCode).toBe(200);
    expect.soft(batch.json().results).toEqual([{ index: 0, connection_id: connectionId, month: '2026-10', kwh: 12, status: 'created' }]);

    const update = await inject('POST', '/v1/connections:update', { cpo_external_ref: ref, connection: { house_number: '14' } });
    expect.soft(update.statusCode).toBe(200);
    expect.soft(update.json()).toMatchObject({ connection_id: connectionId });
  });
});
