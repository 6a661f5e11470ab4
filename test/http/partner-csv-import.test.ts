// POST /partner/drafts/import with CSV (spec §4.2, §2): separators, quotes, BOM, CRLF, Dutch headers,
// unknown columns, no charger coupling; CSV drafts are looked up later by the draft-ean-lookup job (C3.3).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestService, type TestService } from '../helpers/app.ts';
import { aPartner, type TestPartner } from '../helpers/factories.ts';
import { adminHeaders, aPartnerCharger, anEan, draftsOf, postImport, registerEans } from '../helpers/partner-factories.ts';
import { findJob } from '../../src/jobs/registry.ts';

let svc: TestService;

beforeAll(async () => {
  svc = await createTestService();
});
afterAll(async () => svc?.close());

async function importCsv(p: TestPartner, csv: string, extra: Record<string, unknown> = {}) {
  const res = await postImport(svc, p.apiKey, { consent: true, send_invite: false, csv, ...extra });
  expect(res.statusCode).toBe(200);
  return res.json();
}

describe('CSV variants', () => {
  it('reads semicolons, a BOM, CRLF, Dutch headers and quoted fields with separators and line breaks', async () => {
    const p = await aPartner(svc.deps);
    const csv =
      '\uFEFFNaam;Emailadres;Soort;KvKnummer;Bedrijfsnaam;Postcode;Huisnummer;Toevoeging;Woonplaats;Klantnummer;Vriendencode;Opmerking\r\n' +
      'Jan Jansen;jan@klant.nl;particulier;;;1011 AB;12;;Amsterdam;K-001;;"eerste; klant"\r\n' +
      '"Bakker, Piet";piet@klant.nl;zakelijk;12345678;"Bakkerij ""De Korrel"";\r\nfiliaal";3511AA;7;bis;Utrecht;K-002;;\r\n' +
      '\r\n';
    const body = await importCsv(p, csv);
    expect(body.added).toBe(2);
    expect(body.rejected).toEqual([]);
    expect(body.created.map((c: { email: string; external_ref: string; ean_status: string }) => [c.email, c.external_ref, c.ean_status])).toEqual([
      ['jan@klant.nl', 'K-001', 'pending'],
      ['piet@klant.nl', 'K-002', 'pending'],
    ]);
    const stored = Object.fromEntries((await draftsOf(svc.deps, p.partnerId)).map((d) => [d.email, d]));
    expect(stored['jan@klant.nl']).toMatchObject({ name: 'Jan Jansen', postal_code: '1011 AB', house_number: '12', city: 'Amsterdam', type: 'particulier' });
    expect(stored['piet@klant.nl']).toMatchObject({
      name: 'Bakker, Piet',
      type: 'zakelijk',
      kvk: '12345678',
      company_name: 'Bakkerij "De Korrel"; filiaal',
      house_number_addition: 'BIS',
    });
    const batch = await svc.deps.db.selectFrom('partner_batches').selectAll().where('id', '=', body.batch_id).executeTakeFirstOrThrow();
    expect(batch).toMatchObject({ source: 'csv', endpoint: 'import', rows_received: 2 });
  });

  it('reads comma-separated CSV with LF, English headers in any case, and ignores unknown columns', async () => {
    const p = await aPartner(svc.deps);
    const csv = 'EMAIL,Name,Unknown Column,REFERRAL,Company_Name,type,KVK\nann@klant.nl,Ann,zzz,,,,\n"bo@klant.nl","Bo ""B"" Smit",x,VRIEND1,Smit BV,zakelijk,87654321\n';
    const body = await importCsv(p, csv);
    expect(body.added).toBe(2);
    expect(body.referral_codes).toEqual([{ email: 'bo@klant.nl', code: 'VRIEND1', matched: false }]);
    const stored = Object.fromEntries((await draftsOf(svc.deps, p.partnerId)).map((d) => [d.email, d]));
    expect(stored['bo@klant.nl']).toMatchObject({ name: 'Bo "B" Smit', company_name: 'Smit BV', kvk: '87654321', referral_code: 'VRIEND1' });
    expect(stored['ann@klant.nl']!.ean_status).toBe('not_found'); // no address, no EAN: nothing to look up
  });

  it('applies the same skip reasons to CSV rows and never couples a charger from CSV', async () => {
    const p = await aPartner(svc.deps);
    await aPartnerCharger(svc.deps, { partnerId: p.partnerId, brand: 'Alfen', serial: 'CSV-1' });
    const csv = 'naam,email,charger_brand,charger_serial,soort\nA,a@klant.nl,Alfen,CSV-1,\nB,b@example.org,,,\n,c@klant.nl,,,\nD,d@klant.nl,,,zakelijk\nA2,A@KLANT.NL,,,\n';
    const body = await importCsv(p, csv);
    expect(body.added).toBe(1);
    expect(body.rejected).toEqual([
      { email: 'b@example.org', reason: 'reserved_domain', row: 2 },
      { email: 'c@klant.nl', reason: 'invalid', row: 3 },
      { email: 'd@klant.nl', reason: 'missing_kvk', row: 4 },
      { email: 'A@KLANT.NL', reason: 'already_drafted', row: 5 },
    ]);
    const [draft] = await draftsOf(svc.deps, p.partnerId);
    expect(draft!.charger_id).toBeNull();
  });

  it('prefers rows over csv, and refuses CSV without name/email headers', async () => {
    const p = await aPartner(svc.deps);
    const both = await importCsv(p, 'naam,email\nX,x@klant.nl\n', { rows: [{ name: 'Y', email: 'y@klant.nl' }] });
    expect(both.created.map((c: { email: string }) => c.email)).toEqual(['y@klant.nl']);
    const bad = await postImport(svc, p.apiKey, { consent: true, csv: 'foo,bar\n1,2\n' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('invalid_request');
  });

  it('defers EAN lookups of CSV drafts to the draft-ean-lookup job (pending → resolved / candidates / not_found / ean_mismatch)', async () => {
    const p = await aPartner(svc.deps);
    const one = anEan();
    const a = anEan();
    const b = anEan();
    const elsewhere = anEan();
    await registerEans(svc.deps, [
      { ean_code: one, postal_code: '5611AA', house_number: '1' },
      { ean_code: a, postal_code: '5611AA', house_number: '2', house_number_addition: '1' },
      { ean_code: b, postal_code: '5611AA', house_number: '2', house_number_addition: '2' },
      { ean_code: elsewhere, postal_code: '9999ZZ', house_number: '1' },
    ]);
    const csv = `naam,email,postcode,huisnummer,ean\nE,e1@klant.nl,5611AA,1,\nF,f@klant.nl,5611AA,2,\nG,g@klant.nl,5611AA,3,\nH,h@klant.nl,5611AA,1,${elsewhere}\n`;
    const body = await importCsv(p, csv, { source: 'anything-but-api' });
    expect(body.created.every((c: { ean_status: string }) => c.ean_status === 'pending')).toBe(true);

    // run by the operator through the admin API (the scheduler runs the same job on its cron)
    const res = await svc.app.inject({ method: 'POST', url: '/admin/jobs/draft-ean-lookup/run', headers: adminHeaders });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, job: 'draft-ean-lookup' });
    const run = res.json().result;
    const job = findJob('draft-ean-lookup')!;
    // (the earlier tests' CSV drafts were pending too: their addresses are not in the register → not_found)
    expect(run).toMatchObject({ resolved: 2, candidates: 1, address_ignored: 1, still_pending: 0 });
    const stored = Object.fromEntries((await draftsOf(svc.deps, p.partnerId)).map((d) => [d.email, d]));
    expect(stored['e1@klant.nl']).toMatchObject({ ean_status: 'resolved', ean_code: one });
    expect(stored['f@klant.nl']).toMatchObject({ ean_status: 'candidates', ean_code: null, ean_candidates: [a, b].sort() });
    expect(stored['g@klant.nl']).toMatchObject({ ean_status: 'not_found' });
    expect(stored['h@klant.nl']).toMatchObject({ ean_status: 'resolved', ean_code: elsewhere, postal_code: null, address_ignored_reason: 'ean_mismatch' });
    // a second run finds nothing pending
    expect(await job.run(svc.deps)).toMatchObject({ checked: 0 });
  });
});
