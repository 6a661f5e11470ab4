// D229: a rejected item of POST /v1/sessions:batch carries the connection it addressed when one is known: the
// connection_id the caller sent (unknown or archived as well, in the lower-case form the API writes), or the
// connection its account_id or cpo_external_ref resolved to; null only when the item named no single connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { testClock } from '../helpers/clock.ts';
import { aPartner, bearer, type TestPartner } from '../helpers/factories.ts';
import { anAccount, anEan } from '../helpers/onboarding-factories.ts';

describe('D229: the connection_id of a batch item', () => {
  let svc: TestService;
  let partner: TestPartner;
  let other: TestPartner;

  beforeAll(async () => {
    svc = await createTestService({ clock: testClock('2026-11-22T10:00:00Z') });
    partner = await aPartner(svc.deps);
    other = await aPartner(svc.deps);
  });
  afterAll(() => svc?.close());

  const batch = async (items: object[]) => {
    const res = await svc.app.inject({ method: 'POST', url: '/v1/sessions:batch', headers: bearer(await partner.cpoToken(['cpo:sessions:write'])), payload: { items } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().results as Array<{ index: number; connection_id: string | null; status: string; error?: string }>;
  };
  /** what the test reads: connection_id, status and error of each item */
  const brief = (results: Awaited<ReturnType<typeof batch>>) => results.map((r) => [r.connection_id, r.status, r.error ?? null]);

  it('names the connection of every rejected item that addressed one', async () => {
    const active = await anAccount(svc, partner);
    const archived = await anAccount(svc, partner);
    // no API archives a connection
    await svc.deps.db.updateTable('connections').set({ status: 'archived' }).where('id', '=', archived.connection_id).execute();
    const several = await anAccount(svc, partner);
    await svc.deps.db
      .insertInto('connections')
      .values({ account_id: several.account_id, ean_code: anEan(), street: 'X', house_number: '1', postal_code: '1000AA', city: 'A', ean_validation_status: 'matched' })
      .execute();
    const foreign = await anAccount(svc, other);
    const unknown = '3f6c2a4e-8b1d-4c7e-9a2f-5d0e1b7c9a31';

    const results = await batch([
      { connection_id: archived.connection_id, month: '2026-10', kwh: 1 },
      { account_id: archived.account_id, month: '2026-10', kwh: 1 },
      { cpo_external_ref: archived.cpo_external_ref, month: '2026-10', kwh: 1 },
      { connection_id: unknown, month: '2026-10', kwh: 1 },
      { connection_id: unknown.toUpperCase(), month: '2026-10', kwh: 1 },
      { connection_id: foreign.connection_id, month: '2026-10', kwh: 1 },
      { connection_id: active.connection_id, month: '2026-13', kwh: 1 },
      { account_id: active.account_id, month: '2099-01', kwh: 1 },
      { cpo_external_ref: active.cpo_external_ref, month: '2026-10', kwh: -1 },
      // no single connection: nothing to name
      { connection_id: 'nope', month: '2026-10', kwh: 1 },
      { account_id: several.account_id, month: '2026-10', kwh: 1 },
      { account_id: unknown, month: '2026-10', kwh: 1 },
      { cpo_external_ref: 'nobody-has-this-ref', month: '2026-10', kwh: 1 },
      { month: '2026-10', kwh: 1 },
    ]);
    expect(brief(results)).toEqual([
      [archived.connection_id, 'rejected', 'connection_not_active'],
      [archived.connection_id, 'rejected', 'connection_not_active'],
      [archived.connection_id, 'rejected', 'connection_not_active'],
      [unknown, 'rejected', 'connection_not_found'],
      [unknown, 'rejected', 'connection_not_found'],
      [foreign.connection_id, 'rejected', 'connection_not_found'],
      [active.connection_id, 'rejected', 'invalid_month'],
      [active.connection_id, 'rejected', 'month_in_future'],
      [active.connection_id, 'rejected', 'invalid_kwh'],
      [null, 'rejected', 'connection_not_found'],
      [null, 'rejected', 'ambiguous_connection'],
      [null, 'rejected', 'connection_not_found'],
      [null, 'rejected', 'connection_not_found'],
      [null, 'rejected', 'target_required'],
    ]);
  });

  it('a connection_id in upper case addresses the connection, answered in the form the API writes it', async () => {
    const a = await anAccount(svc, partner);
    const results = await batch([{ connection_id: a.connection_id.toUpperCase(), month: '2026-10', kwh: 7 }]);
    expect(brief(results)).toEqual([[a.connection_id, 'created', null]]);
    const months = await svc.deps.db.selectFrom('energy_months').select('kwh').where('connection_id', '=', a.connection_id).execute();
    expect(months).toEqual([{ kwh: '7.00' }]);
  });
});
