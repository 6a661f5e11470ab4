// The Dutch field rules of draft rows (issue 7 item 3) and the header/alias matching of spec §2.
import { describe, expect, it } from 'vitest';
import {
  isReservedDomain,
  validBtw,
  validEan,
  validEmail,
  validHouseNumber,
  validKvk,
  validPostalCode,
  validType,
} from '../../src/domain/partners/validate.ts';
import { canonicalRow, fieldOf } from '../../src/domain/partners/fields.ts';
import { detectDelimiter } from '../../src/domain/partners/csv.ts';
import { anEan, badCheckDigit } from '../helpers/partner-factories.ts';

describe('Dutch field rules', () => {
  it('postal code: 1234 AB, no leading zero, never SA/SD/SS', () => {
    expect(validPostalCode('1234ab')).toBe('1234 AB');
    expect(validPostalCode(' 1234  AB ')).toBeNull();
    expect(validPostalCode('1234 AB')).toBe('1234 AB');
    for (const bad of ['0123 AB', '123 AB', '1234 A', '12345 AB', '1234 SA', '1234sd', '1234 SS', 'ABCD 12']) {
      expect(validPostalCode(bad)).toBeNull();
    }
    expect(validPostalCode('1234 SB')).toBe('1234 SB');
  });

  it('house number with an addition inline or apart', () => {
    expect(validHouseNumber('12', undefined)).toEqual({ house_number: '12', house_number_addition: null });
    expect(validHouseNumber('12a', undefined)).toEqual({ house_number: '12', house_number_addition: 'A' });
    expect(validHouseNumber('12-2', undefined)).toEqual({ house_number: '12', house_number_addition: '2' });
    expect(validHouseNumber('12 bis', undefined)).toEqual({ house_number: '12', house_number_addition: 'BIS' });
    expect(validHouseNumber('12', 'hs')).toEqual({ house_number: '12', house_number_addition: 'HS' });
    expect(validHouseNumber('12A', 'a')).toEqual({ house_number: '12', house_number_addition: 'A' });
    for (const [n, a] of [['0', undefined], ['012', undefined], ['tien', undefined], ['123456', undefined], ['12A', 'B'], ['12', 'toolongx'], ['', undefined]] as const) {
      expect(validHouseNumber(n, a)).toBeNull();
    }
  });

  it('KvK 8 digits, BTW NL999999999B99, EAN 18 digits 871 with GS1 check digit', () => {
    expect(validKvk('1234 5678')).toBe('12345678');
    expect(validKvk('1234567')).toBeNull();
    expect(validKvk('123456789')).toBeNull();
    expect(validBtw('NL123456789B01')).toBe('NL123456789B01');
    expect(validBtw('nl 1234.567.89 b01')).toBe('NL123456789B01');
    expect(validBtw('BE0123456789')).toBeNull();
    expect(validBtw('NL123456789B1')).toBeNull();
    const ean = anEan();
    expect(validEan(ean)).toBe(ean);
    expect(validEan(ean.replace(/(\d{6})/g, '$1 '))).toBe(ean);
    expect(validEan(badCheckDigit(ean))).toBeNull();
    expect(validEan('541448820000000000')).toBeNull(); // not 871
    expect(validEan(ean.slice(1))).toBeNull();
  });

  it('e-mail, reserved domains and type', () => {
    expect(validEmail(' jan@klant.nl ')).toBe('jan@klant.nl');
    for (const bad of ['jan', 'jan@', '@klant.nl', 'jan@klant', 'j an@klant.nl', 'jan..x@klant.nl', 'jan@-klant.nl']) {
      expect(validEmail(bad)).toBeNull();
    }
    for (const r of ['a@example.com', 'a@mail.example.net', 'a@example.org', 'a@x.test', 'a@x.example', 'a@x.invalid', 'a@x.localhost']) {
      expect(isReservedDomain(r)).toBe(true);
    }
    expect(isReservedDomain('a@example.nl')).toBe(false);
    expect(validType(undefined)).toBe('particulier');
    expect(validType('Zakelijk')).toBe('zakelijk');
    expect(validType('VvE')).toBe('vve');
    expect(validType('overheid')).toBeNull();
  });
});

describe('field names (spec §2)', () => {
  it('maps every alias case-insensitively and ignores unknown names', () => {
    const aliases: Record<string, string[]> = {
      type: ['type', 'soort'],
      name: ['name', 'naam'],
      email: ['email', 'emailadres', 'mail'],
      ean: ['ean', 'eancode'],
      kvk: ['kvk', 'kvknummer'],
      btw: ['btw', 'btwnummer', 'vat'],
      company_name: ['bedrijfsnaam', 'bedrijf', 'company_name', 'company'],
      contact_name: ['contactpersoon', 'contact_name', 'contact'],
      referral_code: ['referral_code', 'referral', 'vriendencode'],
      external_ref: ['external_ref', 'customer_ref', 'klantnummer', 'referentie', 'extref'],
      postal_code: ['postcode', 'postal_code', 'zip', 'zipcode'],
      house_number: ['huisnummer', 'house_number'],
      house_number_addition: ['toevoeging', 'huisnummertoevoeging', 'house_number_addition', 'house_number_suffix'],
      city: ['plaats', 'woonplaats', 'stad', 'city'],
    };
    for (const [field, names] of Object.entries(aliases)) {
      for (const n of names) {
        expect(fieldOf(n)).toBe(field);
        expect(fieldOf(n.toUpperCase())).toBe(field);
        expect(fieldOf(` ${n[0]!.toUpperCase()}${n.slice(1)} `)).toBe(field);
      }
    }
    expect(fieldOf('\uFEFFNaam')).toBe('name');
    expect(fieldOf('opmerking')).toBeUndefined();
    expect(canonicalRow({ NAAM: ' Jan ', Mail: 'j@k.nl', huisnummer: 7, charger_brand: 'Alfen', x: 1 }, { allowCharger: false })).toEqual({
      name: 'Jan',
      email: 'j@k.nl',
      house_number: '7',
    });
    expect(canonicalRow({ charger_brand: 'Alfen' }, { allowCharger: true })).toEqual({ charger_brand: 'Alfen' });
  });

  it('detects the CSV separator from the header line, outside quotes', () => {
    expect(detectDelimiter('naam;email\n')).toBe(';');
    expect(detectDelimiter('naam,email\n')).toBe(',');
    expect(detectDelimiter('"a,b,c";email;x\n')).toBe(';');
    expect(detectDelimiter('naam,email\nx;y;z;w\n')).toBe(',');
  });
});
