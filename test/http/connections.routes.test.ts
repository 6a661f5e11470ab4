// POST /v1/connections:update (spec §4.1 rules 1–4, every error) and the §3 transitions and no-move rules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { anAccount, anEan, aSignedMandate, aCpoCharger } from '../helpers/onboarding-factories.ts';

describe('POST /v1/connections:update', () => {
  let svc: TestService;
  let partner: TestPartner;
  let other: TestPartner;
  let token: string;

  beforeAll(async () => {
    svc = await createTestService();
    partner = await aPartner(svc.deps);
    other = await aPartner(svc.deps);
    token = await partner.cpoToken();
  });
  afterAll(() => svc.close());

  const update = (payload: unknown, t = token) =>
    svc.app.inject({ method: 'POST', url: '/v1/connections:update', headers: bearer(t), payload: payload as object });
  const conn = (id: string) => svc.deps.db.selectFrom('connections').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const eligible = async (accountId: string) => (await import('../../src/domain/accounts/eligibility.ts')).isAccountEreEligible(svc.deps.db, accountId);

  it('corrects the EAN alone (by connection_id): changed, stored, re-validated', async () => {
    const a = await anAccount(svc, partner);
    const ean = anEan();
    const res = await update({ connection_id: a.connection_id, connection: { ean_code: ean } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      ok: true,
      changed: true,
      connection_id: a.connection_id,
      account_id: a.account_id,
      ean_code: ean,
      ean_validation_status: 'matched',
      registration_status: 'concept',
      mandate_status: 'pending',
      mandate_revoked: false,
    });
    expect((await conn(a.connection_id)).ean_code).toBe(ean);
  });

  it('targets by account_id and by cpo_external_ref; partial address; house_number_addition null clears', async () => {
    const a = await anAccount(svc, partner, { connection: { house_number_addition: 'B' } });
    const r1 = await update({ account_id: a.account_id, connection: { street: 'Correctiestraat', house_number: 7 } });
    expect(r1.statusCode).toBe(200);
    expect(r1.json().changed).toBe(true);
    let row = await conn(a.connection_id);
    expect(row).toMatchObject({ street: 'Correctiestraat', house_number: '7', house_number_addition: 'B', city: 'Utrecht', ean_code: a.ean_code });
    const r2 = await update({ cpo_external_ref: a.cpo_external_ref, connection: { house_number_addition: null } });
    expect(r2.json()).toMatchObject({ changed: true, connection_id: a.connection_id });
    row = await conn(a.connection_id);
    expect(row.house_number_addition).toBeNull();
  });

  it('rule 4: an unchanged body answers changed: false and writes nothing', async () => {
    const a = await anAccount(svc, partner);
    const before = await conn(a.connection_id);
    const res = await update({ connection_id: a.connection_id, connection: { ean_code: a.ean_code, city: 'Utrecht', postal_code: '3511AB' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, changed: false, mandate_revoked: false, ean_code: a.ean_code });
    expect((await conn(a.connection_id)).updated_at).toEqual(before.updated_at);
    const empty = await update({ connection_id: a.connection_id });
    expect(empty.json().changed).toBe(false);
  });

  it('rule 2 / no-move: a correction on a signed connection without the flag is 409 mandate_signed and changes nothing', async () => {
    const a = await anAccount(svc, partner);
    await aSignedMandate(svc, a.connection_id, { partner });
    const res = await update({ connection_id: a.connection_id, connection: { ean_code: anEan() } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'mandate_signed', detail: expect.any(String) });
    expect(await conn(a.connection_id)).toMatchObject({ ean_code: a.ean_code, mandate_status: 'active', registration_status: 'ingediend' });
  });

  it('§3: with acknowledge_mandate_lapses the machtiging is revoked, the connection returns to concept and eligibility is cleared; signing again restores it', async () => {
    const a = await anAccount(svc, partner);
    await aSignedMandate(svc, a.connection_id, { partner });
    await aCpoCharger(svc, partner, a.account_id);
    expect(await eligible(a.account_id)).toBe(true);
    const ean = anEan();
    const res = await update({ connection_id: a.connection_id, connection: { ean_code: ean }, acknowledge_mandate_lapses: true });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ changed: true, ean_code: ean, mandate_status: 'pending', registration_status: 'concept', mandate_revoked: true });
    expect(await conn(a.connection_id)).toMatchObject({ mandate_status: 'pending', registration_status: 'concept', mandate_valid_from: null, ean_code: ean });
    const mandates = await svc.deps.db.selectFrom('mandates').select(['status', 'revoked_at', 'ean_code']).where('connection_id', '=', a.connection_id).execute();
    expect(mandates).toEqual([{ status: 'revoked', revoked_at: expect.any(Date), ean_code: a.ean_code }]);
    expect(await eligible(a.account_id)).toBe(false);
    // a new signing link can be issued, and signing the corrected EAN makes the account eligible again
    const link = await svc.app.inject({ method: 'POST', url: '/v1/mandate-links', headers: bearer(token), payload: { connection_id: a.connection_id } });
    expect(link.statusCode).toBe(201);
    await aSignedMandate(svc, a.connection_id, { partner });
    expect(await eligible(a.account_id)).toBe(true);
  });

  it('acknowledge_mandate_lapses is ignored when no machtiging is active', async () => {
    const a = await anAccount(svc, partner);
    const res = await update({ connection_id: a.connection_id, connection: { city: 'Houten' }, acknowledge_mandate_lapses: true });
    expect(res.json()).toMatchObject({ changed: true, mandate_revoked: false, mandate_status: 'pending' });
  });

  it('rule 3 / no-move: a registered ERE month gives 409 ere_booked, even for an unchanged body', async () => {
    const a = await anAccount(svc, partner);
    await aSignedMandate(svc, a.connection_id, { partner });
    await svc.deps.db.insertInto('energy_months').values({ connection_id: a.connection_id, month: '2026-09', kwh: '120.50', source: 'cpo', status: 'registered' }).execute();
    const unchanged = await update({ connection_id: a.connection_id, connection: { ean_code: a.ean_code } });
    expect(unchanged.statusCode).toBe(409);
    expect(unchanged.json()).toEqual({ error: 'ere_booked', detail: expect.any(String) });
    const changed = await update({ connection_id: a.connection_id, connection: { ean_code: anEan() }, acknowledge_mandate_lapses: true });
    expect(changed.statusCode).toBe(409);
    expect(changed.json().error).toBe('ere_booked');
    expect(await conn(a.connection_id)).toMatchObject({ ean_code: a.ean_code, mandate_status: 'active' });
  });

  it('a delivered (not registered) month does not block a correction', async () => {
    const a = await anAccount(svc, partner);
    await svc.deps.db.insertInto('energy_months').values({ connection_id: a.connection_id, month: '2026-09', kwh: '10', source: 'cpo', status: 'delivered' }).execute();
    const res = await update({ connection_id: a.connection_id, connection: { city: 'Zeist' } });
    expect(res.json().changed).toBe(true);
  });

  it('400 target_required without connection_id, account_id or cpo_external_ref', async () => {
    const res = await update({ connection: { city: 'Zeist' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'target_required', detail: expect.any(String) });
  });

  it('400 invalid_ean for a malformed EAN; 400 address_required for an emptied address field; nothing changes', async () => {
    const a = await anAccount(svc, partner);
    const r1 = await update({ connection_id: a.connection_id, connection: { ean_code: '871-123' } });
    expect(r1.statusCode).toBe(400);
    expect(r1.json().error).toBe('invalid_ean');
    const r2 = await update({ connection_id: a.connection_id, connection: { street: '  ' } });
    expect(r2.statusCode).toBe(400);
    expect(r2.json().error).toBe('address_required');
    const r3 = await update({ connection_id: a.connection_id, connection: { postal_code: null } });
    expect(r3.json().error).toBe('address_required');
    expect(await conn(a.connection_id)).toMatchObject({ ean_code: a.ean_code, street: 'Laadpaalstraat' });
  });

  it('404 connection_not_found: unknown id, malformed id, unknown ref, and another partner’s connection (tenancy)', async () => {
    const a = await anAccount(svc, partner);
    for (const target of [
      { connection_id: '00000000-0000-4000-8000-000000000000' },
      { connection_id: 'not-a-uuid' },
      { cpo_external_ref: 'nobody' },
      { account_id: '00000000-0000-4000-8000-000000000000' },
    ]) {
      const res = await update({ ...target, connection: { city: 'X' } });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'connection_not_found', detail: expect.any(String) });
    }
    const otherToken = await other.cpoToken();
    for (const target of [{ connection_id: a.connection_id }, { account_id: a.account_id }, { cpo_external_ref: a.cpo_external_ref }]) {
      const res = await update({ ...target, connection: { city: 'Gestolen' } }, otherToken);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe('connection_not_found');
    }
    expect((await conn(a.connection_id)).city).toBe('Utrecht');
  });

  it('409 ambiguous_connection when account_id has several active connections', async () => {
    const a = await anAccount(svc, partner);
    await svc.deps.db
      .insertInto('connections')
      .values({ account_id: a.account_id, ean_code: anEan(), street: 'Tweede', house_number: '1', postal_code: '1000AA', city: 'Amsterdam' })
      .execute();
    const res = await update({ account_id: a.account_id, connection: { city: 'X' } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'ambiguous_connection', detail: expect.any(String) });
    const byId = await update({ connection_id: a.connection_id, connection: { city: 'Amersfoort' } });
    expect(byId.json().changed).toBe(true);
  });

  it('409 connection_not_active for an archived connection', async () => {
    const a = await anAccount(svc, partner);
    await svc.deps.db.updateTable('connections').set({ status: 'archived' }).where('id', '=', a.connection_id).execute();
    const res = await update({ connection_id: a.connection_id, connection: { city: 'X' } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'connection_not_active', detail: expect.any(String) });
    const viaAccount = await update({ account_id: a.account_id, connection: { city: 'X' } });
    expect(viaAccount.json().error).toBe('connection_not_active');
    expect((await conn(a.connection_id)).city).toBe('Utrecht');
  });

  it('rule 1: 409 ean_in_use when the corrected EAN belongs to another connection (any partner)', async () => {
    const a = await anAccount(svc, partner);
    const b = await anAccount(svc, other);
    const res = await update({ connection_id: a.connection_id, connection: { ean_code: b.ean_code } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ error: 'ean_in_use', detail: expect.any(String) });
    expect((await conn(a.connection_id)).ean_code).toBe(a.ean_code);
  });

  it('race: two corrections to one free EAN give one 200 and one 409 ean_in_use', async () => {
    const a = await anAccount(svc, partner);
    const b = await anAccount(svc, partner);
    const ean = anEan();
    const [ra, rb] = await Promise.all([
      update({ connection_id: a.connection_id, connection: { ean_code: ean } }),
      update({ connection_id: b.connection_id, connection: { ean_code: ean } }),
    ]);
    expect([ra.statusCode, rb.statusCode].sort()).toEqual([200, 409]);
    expect((ra.statusCode === 409 ? ra : rb).json().error).toBe('ean_in_use');
    expect(await svc.deps.db.selectFrom('connections').select('id').where('ean_code', '=', ean).execute()).toHaveLength(1);
  });
});
