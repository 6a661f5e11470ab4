// C3.1/C3.2: every skip reason and every address_ignored reason, each with a row that triggers it,
// asserting rejected, skipped and what was stored (spec §4.2).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, aUser, type TestPartner } from '../helpers/factories.ts';
import { aPartnerCharger, anEan, badCheckDigit, draftsOf, postCustomers, postImport, registerEans } from '../helpers/partner-factories.ts';
import { suppressEmail } from '../../src/domain/invites/index.ts';

let svc: TestService;
let partner: TestPartner;

beforeAll(async () => {
  svc = await createTestService();
  partner = await aPartner(svc.deps, { name: 'Laadpunt Installateurs BV' });
});
afterAll(async () => svc?.close());

describe('POST /partner/customers skip reasons (C3.2)', () => {
  it('decides every skip reason per row and stores only the drafts', async () => {
    const deps = svc.deps;
    await aUser(deps, { email: 'Bestaand@klant.nl' });
    await suppressEmail(deps, { email: 'weg@klant.nl', reason: 'bounce' });
    // an EAN already booked on an active connection
    const bookedEan = anEan();
    const draftedEan = anEan();
    const acc = await deps.db.insertInto('accounts').values({ partner_id: partner.partnerId, display_name: 'x' }).returning('id').executeTakeFirstOrThrow();
    await deps.db
      .insertInto('connections')
      .values({ account_id: acc.id, ean_code: bookedEan, street: 'Straat', house_number: '1', postal_code: '1011AB', city: 'Amsterdam' })
      .execute();
    // an earlier draft with external_ref K-1 for another e-mail, and an open draft for open@klant.nl
    const first = await postCustomers(svc, partner.apiKey, {
      consent: true,
      send_invite: false,
      customers: [
        { name: 'Eerder', email: 'eerder@klant.nl', external_ref: 'K-1' },
        { name: 'Open', email: 'open@klant.nl', ean: draftedEan },
      ],
    });
    expect(first.statusCode).toBe(200);
    expect(first.json().added).toBe(2);
    // chargers: one linked and free, one already owned by a user
    const owner = await aUser(deps, { email: 'eigenaar@klant.nl' });
    const free = await aPartnerCharger(deps, { partnerId: partner.partnerId, brand: 'Alfen', serial: 'ALF-001' });
    await aPartnerCharger(deps, { partnerId: partner.partnerId, brand: 'Zaptec', serial: 'ZAP-009', ownerUserId: owner.userId });
    const other = await aPartner(deps);
    await aPartnerCharger(deps, { partnerId: other.partnerId, brand: 'Easee', serial: 'EAS-777' });

    const res = await postCustomers(svc, partner.apiKey, {
      consent: true,
      send_invite: false,
      customers: [
        { name: 'Goed', email: 'goed@klant.nl' }, // 0 becomes a draft
        { name: '', email: 'leeg@klant.nl' }, // invalid: no name
        { name: 'Slecht', email: 'geen-email' }, // invalid: bad email
        { name: 'Voorbeeld', email: 'a@example.com' }, // reserved_domain
        { name: 'Test', email: 'b@shop.test' }, // reserved_domain
        { name: 'Bedrijf', email: 'bv@klant.nl', type: 'zakelijk' }, // missing_kvk
        { name: 'Bedrijf 2', email: 'bv2@klant.nl', type: 'zakelijk', kvk: '1234' }, // missing_kvk (not 8 digits)
        { name: 'Open', email: 'OPEN@klant.nl' }, // already_drafted (open draft)
        { name: 'Dubbel', email: 'goed@klant.nl' }, // already_drafted (earlier in request)
        { name: 'Bestaand', email: 'bestaand@klant.nl' }, // existing_user
        { name: 'Weg', email: 'weg@klant.nl' }, // suppressed
        { name: 'Ref', email: 'ander@klant.nl', external_ref: 'K-1' }, // conflict: ref with another email
        { name: 'Ean', email: 'ean@klant.nl', ean: bookedEan }, // conflict: EAN booked
        { name: 'Ean 2', email: 'ean2@klant.nl', ean: draftedEan }, // conflict: EAN in another customer's open draft
        { name: 'Merk', email: 'merk@klant.nl', charger_brand: 'Onbekend', charger_serial: 'X1' }, // charger_brand_unsupported
        { name: 'Niet', email: 'niet@klant.nl', charger_brand: 'Easee', charger_serial: 'EAS-777' }, // charger_not_linked (other partner)
        { name: 'Bezet', email: 'bezet@klant.nl', charger_brand: 'Zaptec', charger_serial: 'ZAP-009' }, // charger_claimed
        { name: 'Laadpaal', email: 'laadpaal@klant.nl', charger_brand: 'alfen', charger_serial: 'alf-001' }, // draft + charger
        { name: 'Laadpaal 2', email: 'laadpaal2@klant.nl', charger_brand: 'Alfen', charger_serial: 'ALF-001' }, // charger_claimed (earlier row)
      ],
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.ok).toBe(true);
    expect(body.added).toBe(2);
    expect(body.created.map((c: { email: string }) => c.email)).toEqual(['goed@klant.nl', 'laadpaal@klant.nl']);
    expect(body.rejected).toEqual([
      { email: 'leeg@klant.nl', reason: 'invalid', row: 2 },
      { email: 'geen-email', reason: 'invalid', row: 3 },
      { email: 'a@example.com', reason: 'reserved_domain', row: 4 },
      { email: 'b@shop.test', reason: 'reserved_domain', row: 5 },
      { email: 'bv@klant.nl', reason: 'missing_kvk', row: 6 },
      { email: 'bv2@klant.nl', reason: 'missing_kvk', row: 7 },
      { email: 'OPEN@klant.nl', reason: 'already_drafted', row: 8 },
      { email: 'goed@klant.nl', reason: 'already_drafted', row: 9 },
      { email: 'bestaand@klant.nl', reason: 'existing_user', row: 10 },
      { email: 'weg@klant.nl', reason: 'suppressed', row: 11 },
      { email: 'ander@klant.nl', reason: 'conflict', row: 12 },
      { email: 'ean@klant.nl', reason: 'conflict', row: 13 },
      { email: 'ean2@klant.nl', reason: 'conflict', row: 14 },
      { email: 'merk@klant.nl', reason: 'charger_brand_unsupported', row: 15 },
      { email: 'niet@klant.nl', reason: 'charger_not_linked', row: 16 },
      { email: 'bezet@klant.nl', reason: 'charger_claimed', row: 17 },
      { email: 'laadpaal2@klant.nl', reason: 'charger_claimed', row: 19 },
    ]);
    expect(body.skipped).toEqual({
      invalid: 2,
      reserved_domain: 2,
      missing_kvk: 2,
      already_drafted: 2,
      existing_user: 1,
      suppressed: 1,
      conflict: 3,
      over_request_limit: 0,
      over_cap: 0,
      charger_brand_unsupported: 1,
      charger_not_linked: 1,
      charger_claimed: 2,
    });
    expect(body.cap).toEqual({ rolling_days: 30, rolling_cap: 5000, remaining_before: 4998 });
    expect(body.claim_urls).toHaveLength(2);
    expect(body.claim_urls[0].claim_url).toBe(body.created[0].claim_url);

    const stored = await draftsOf(deps, partner.partnerId);
    expect(stored.map((d) => d.email).sort()).toEqual(['eerder@klant.nl', 'goed@klant.nl', 'laadpaal@klant.nl', 'open@klant.nl']);
    const withCharger = stored.find((d) => d.email === 'laadpaal@klant.nl')!;
    expect(withCharger.charger_id).toBe(free.chargerId);
    expect(withCharger.batch_id).toBe(body.batch_id);
    const batch = await deps.db.selectFrom('partner_batches').selectAll().where('id', '=', body.batch_id).executeTakeFirstOrThrow();
    expect(batch).toMatchObject({ rows_received: 19, rows_added: 2, endpoint: 'customers', source: 'api' });
  });

  it('drops an invalid address into address_ignored and still makes the draft (C3.1)', async () => {
    const deps = svc.deps;
    const ean = anEan();
    const elsewhere = anEan();
    await registerEans(deps, [
      { ean_code: ean, postal_code: '3511AA', house_number: '10' },
      { ean_code: elsewhere, postal_code: '9711BB', house_number: '99' },
    ]);
    const res = await postCustomers(svc, partner.apiKey, {
      consent: true,
      customers: [
        { name: 'Postcode', email: 'pc@klant.nl', postal_code: '1234 SA', house_number: '5' }, // SA is never issued
        { name: 'Postcode 2', email: 'pc2@klant.nl', postcode: '0123AB', huisnummer: '5' }, // leading zero
        { name: 'Huisnummer', email: 'hn@klant.nl', postal_code: '3511 AA', house_number: 'tien' },
        { name: 'Huisnummer 2', email: 'hn2@klant.nl', postal_code: '3511AA' }, // number missing
        { name: 'Mismatch', email: 'mm@klant.nl', postal_code: '3511AA', house_number: '10', ean: elsewhere }, // register: EAN elsewhere
        { name: 'Goed', email: 'ok@klant.nl', postal_code: '3511aa', house_number: '10', ean },
        { name: 'Ongeldige EAN', email: 'badean@klant.nl', ean: badCheckDigit(anEan()) },
        { name: 'Btw', email: 'btw@klant.nl', type: 'Zakelijk', kvk: '12345678', btw: 'nl 1234.56789 b01', company_name: 'Btw BV' },
      ],
    });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.added).toBe(8);
    expect(body.rejected).toEqual([]);
    expect(body.address_ignored).toEqual([
      { email: 'pc@klant.nl', reason: 'invalid_postal_code', row: 1 },
      { email: 'pc2@klant.nl', reason: 'invalid_postal_code', row: 2 },
      { email: 'hn@klant.nl', reason: 'invalid_house_number', row: 3 },
      { email: 'hn2@klant.nl', reason: 'invalid_house_number', row: 4 },
      { email: 'mm@klant.nl', reason: 'ean_mismatch', row: 5 },
    ]);
    const byEmail = Object.fromEntries(body.created.map((c: { email: string }) => [c.email, c]));
    expect(byEmail['ok@klant.nl']).toMatchObject({ ean_status: 'resolved', ean_candidates: 1 });
    expect(byEmail['mm@klant.nl']).toMatchObject({ ean_status: 'resolved', ean_candidates: 1 });
    expect(byEmail['badean@klant.nl']).toMatchObject({ ean_status: 'invalid', ean_candidates: 0 });
    expect(byEmail['pc@klant.nl']).toMatchObject({ ean_status: 'not_found', ean_candidates: 0 });

    const stored = Object.fromEntries((await draftsOf(deps, partner.partnerId)).map((d) => [d.email, d]));
    expect(stored['pc@klant.nl']).toMatchObject({ postal_code: null, house_number: null, address_ignored_reason: 'invalid_postal_code' });
    expect(stored['hn@klant.nl']).toMatchObject({ postal_code: null, house_number: null, address_ignored_reason: 'invalid_house_number' });
    expect(stored['mm@klant.nl']).toMatchObject({ postal_code: null, ean_code: elsewhere, address_ignored_reason: 'ean_mismatch' });
    expect(stored['ok@klant.nl']).toMatchObject({ postal_code: '3511 AA', house_number: '10', ean_code: ean, address_ignored_reason: null });
    expect(stored['badean@klant.nl']).toMatchObject({ ean_code: null, ean_status: 'invalid' });
    expect(stored['btw@klant.nl']).toMatchObject({ type: 'zakelijk', kvk: '12345678', btw: 'NL123456789B01', company_name: 'Btw BV' });
  });

  it('looks EANs up by address for source api: resolved, candidates, not_found (C3.3)', async () => {
    const deps = svc.deps;
    const one = anEan();
    const a = anEan();
    const b = anEan();
    await registerEans(deps, [
      { ean_code: one, postal_code: '2511CV', house_number: '1' },
      { ean_code: a, postal_code: '2511CV', house_number: '3', house_number_addition: 'A' },
      { ean_code: b, postal_code: '2511CV', house_number: '3', house_number_addition: 'B' },
    ]);
    const res = await postImport(svc, partner.apiKey, {
      consent: true,
      source: 'api',
      rows: [
        { Naam: 'Een', EMAIL: 'een@klant.nl', Postcode: '2511 CV', Huisnummer: 1 },
        { naam: 'Twee', mail: 'twee@klant.nl', zip: '2511CV', house_number: '3' },
        { naam: 'Drie', emailadres: 'drie@klant.nl', zipcode: '2511CV', huisnummer: '3', toevoeging: 'b' },
        { naam: 'Vier', email: 'vier@klant.nl', postal_code: '2511CV', house_number: '5' },
      ],
    });
    expect(res.statusCode).toBe(200);
    const created = res.json().created;
    expect(created.map((c: { ean_status: string; ean_candidates: number }) => [c.ean_status, c.ean_candidates])).toEqual([
      ['resolved', 1],
      ['candidates', 2],
      ['resolved', 1],
      ['not_found', 0],
    ]);
    const stored = Object.fromEntries((await draftsOf(deps, partner.partnerId)).map((d) => [d.email, d]));
    expect(stored['een@klant.nl']!.ean_code).toBe(one);
    expect(stored['twee@klant.nl']!.ean_candidates).toEqual([a, b].sort());
    expect(stored['drie@klant.nl']).toMatchObject({ ean_code: b, house_number_addition: 'B' });
  });
});
