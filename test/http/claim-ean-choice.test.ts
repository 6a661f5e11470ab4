// D160: on production the register checks the claimed connection's EAN against its address. A customer at "3"
// offered the register's EANs of 3A and 3B picked one and got 422 "this EAN does not belong to your address" for
// either choice (the connection was made at 3, which the register lists under neither); the page showed bare EAN
// numbers, so the customer could not tell which was theirs either.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, type TestPartner } from '../helpers/factories.ts';
import { anEan, postCustomers, registerEans } from '../helpers/partner-factories.ts';

let svc: TestService;
let partner: TestPartner;

beforeAll(async () => {
  svc = await createTestService({ env: { APP_ENV: 'production' } });
  partner = await aPartner(svc.deps, { name: 'Zonnig Laden BV' });
});
afterAll(async () => svc?.close());

const pathOf = (url: string) => new URL(url).pathname;
const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

describe('a claim choosing among the EANs of a number with additions (production, D160)', () => {
  it('shows each EAN with its house number, and the chosen one makes a matched connection at its address', async () => {
    const [a, b] = [anEan(), anEan()];
    await registerEans(svc.deps, [
      { ean_code: a, postal_code: '4000AB', house_number: '3', house_number_addition: 'A' },
      { ean_code: b, postal_code: '4000AB', house_number: '3', house_number_addition: 'B' },
    ]);
    const up = await postCustomers(svc, partner.apiKey, {
      consent: true, send_invite: false, customers: [{ name: 'Kandidaat', email: 'kandidaat@klant.nl', postcode: '4000 AB', huisnummer: '3' }],
    });
    const created = up.json().created[0];
    expect(created).toMatchObject({ ean_status: 'candidates', ean_candidates: 2 });
    const url = pathOf(created.claim_url);

    const page = await svc.app.inject({ method: 'GET', url });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<option value="${a}">${a} (huisnummer 3 A)</option>`);
    expect(page.body).toContain(`<option value="${b}">${b} (huisnummer 3 B)</option>`);

    const res = await svc.app.inject({
      method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form({ street: 'Laan', city: 'Delft', ean: b, iban: 'NL91ABNA0417164300' }),
    });
    expect(res.statusCode, res.body.slice(0, 400)).toBe(200);
    const conn = await svc.deps.db.selectFrom('connections').selectAll().where('ean_code', '=', b).executeTakeFirstOrThrow();
    expect(conn).toMatchObject({ postal_code: '4000 AB', house_number: '3', house_number_addition: 'B', ean_validation_status: 'matched' });
  });
});
