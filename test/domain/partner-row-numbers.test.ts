// D210: every `rejected` and `address_ignored` entry names its row, the 1-based position in the request, so that
// rows with an empty or malformed e-mail (`{email: "", reason: "invalid"}`) can be told apart and found. JSON
// `customers` and `rows`: the array index + 1; `csv`: the data row, the record after the header being 1, a blank line
// counting as a row and a quoted field over several lines not (a spreadsheet shows the records).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner } from '../helpers/factories.ts';
import { postCustomers, postImport } from '../helpers/partner-factories.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await createTestService();
});
afterAll(async () => svc?.close());

async function ok(res: Awaited<ReturnType<typeof postCustomers>>) {
  expect(res.statusCode).toBe(200);
  return res.json();
}

describe('D210 rejected rows carry their row number', () => {
  it('customers: the array index + 1, also in address_ignored; rows with an empty e-mail are told apart', async () => {
    const p = await aPartner(svc.deps);
    const body = await ok(
      await postCustomers(svc, p.apiKey, {
        consent: true,
        send_invite: false,
        customers: [
          { name: 'Een', email: 'een-rows@klant.nl' },
          { name: 'Twee', email: '' },
          { name: 'Drie', email: 'geen-adres' },
          { name: 'Vier', email: 'een-rows@klant.nl' },
          { name: 'Vijf', email: 'vijf-rows@klant.nl', postal_code: '0123 AB', house_number: '1' },
          { name: 'Zes' },
        ],
      }),
    );
    expect(body.rejected).toEqual([
      { email: '', reason: 'invalid', row: 2 },
      { email: 'geen-adres', reason: 'invalid', row: 3 },
      { email: 'een-rows@klant.nl', reason: 'already_drafted', row: 4 },
      { email: '', reason: 'invalid', row: 6 },
    ]);
    expect(body.address_ignored).toEqual([{ email: 'vijf-rows@klant.nl', reason: 'invalid_postal_code', row: 5 }]);
  });

  it('import rows: the array index + 1', async () => {
    const p = await aPartner(svc.deps);
    const body = await ok(
      await postImport(svc, p.apiKey, {
        consent: true,
        send_invite: false,
        rows: [{ name: 'A', email: 'a-import@klant.nl' }, { name: 'B' }, { name: 'C', email: 'c-import@example.com' }],
      }),
    );
    expect(body.rejected).toEqual([
      { email: '', reason: 'invalid', row: 2 },
      { email: 'c-import@example.com', reason: 'reserved_domain', row: 3 },
    ]);
  });

  it('csv: the data row after the header; a blank line and an empty record count, a quoted line break does not', async () => {
    const p = await aPartner(svc.deps);
    const csv =
      '\r\n' + // a blank line before the header is not a row
      'naam;email;postcode;huisnummer\r\n' +
      'Een;een-csv@klant.nl;;\r\n' + // 1
      'Twee;;;\r\n' + // 2: no e-mail
      '\r\n' + // 3: blank
      '"Drie\r\nregel twee";drie-fout;;\r\n' + // 4: one record over two lines, bad e-mail
      ';;;\r\n' + // 5: an empty record
      'Zes;zes-csv@klant.nl;9999 SS;3\r\n' + // 6: address ignored
      'Zeven;;;\r\n'; // 7: no e-mail
    const body = await ok(await postImport(svc, p.apiKey, { consent: true, send_invite: false, csv }));
    expect(body.added).toBe(2);
    expect(body.rejected).toEqual([
      { email: '', reason: 'invalid', row: 2 },
      { email: 'drie-fout', reason: 'invalid', row: 4 },
      { email: '', reason: 'invalid', row: 7 },
    ]);
    expect(body.address_ignored).toEqual([{ email: 'zes-csv@klant.nl', reason: 'invalid_postal_code', row: 6 }]);
  });

  it('a 1,002-row csv without e-mail addresses: each row its own number, over_request_limit past 1,000', async () => {
    const p = await aPartner(svc.deps);
    const lines = Array.from({ length: 1002 }, (_, i) => `Klant ${i + 1};`);
    const body = await ok(await postImport(svc, p.apiKey, { consent: true, send_invite: false, csv: `naam;email\n${lines.join('\n')}\n` }));
    expect(body.rejected).toHaveLength(1002);
    expect(body.rejected.map((r: { row: number }) => r.row)).toEqual(Array.from({ length: 1002 }, (_, i) => i + 1));
    expect(body.rejected[999]).toEqual({ email: '', reason: 'invalid', row: 1000 });
    expect(body.rejected.slice(1000)).toEqual([
      { email: '', reason: 'over_request_limit', row: 1001 },
      { email: '', reason: 'over_request_limit', row: 1002 },
    ]);
  });
});
