// spec §2 Partner draft: the row field names and their aliases, matched case-insensitively, for JSON rows
// and CSV headers alike. Unknown names are ignored. The charger fields are ours (C3.2) and API rows only.

export type DraftField =
  | 'type'
  | 'name'
  | 'email'
  | 'ean'
  | 'kvk'
  | 'btw'
  | 'company_name'
  | 'contact_name'
  | 'referral_code'
  | 'external_ref'
  | 'postal_code'
  | 'house_number'
  | 'house_number_addition'
  | 'city'
  | 'charger_brand'
  | 'charger_serial';

const ALIASES: Record<DraftField, string[]> = {
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
  charger_brand: ['charger_brand'],
  charger_serial: ['charger_serial', 'charger_serial_number'],
};

/** Charger-coupling fields: only rows sent as JSON may carry them (spec §4.2: CSV cannot pre-couple). */
export const CHARGER_FIELDS: readonly DraftField[] = ['charger_brand', 'charger_serial'];

const BY_NAME = new Map<string, DraftField>();
for (const [field, names] of Object.entries(ALIASES) as [DraftField, string[]][]) {
  for (const n of names) BY_NAME.set(n, field);
}

/** The field a key or header names, or undefined. Case, surrounding spaces and a BOM do not matter. */
export function fieldOf(name: string): DraftField | undefined {
  return BY_NAME.get(name.replace(/^\uFEFF/, '').trim().toLowerCase());
}

export type RawRow = Partial<Record<DraftField, string>>;

/**
 * One input row (a JSON object) in canonical field names, values as trimmed strings (numbers too:
 * `house_number: 12`). The first non-empty value wins when two aliases of one field are both present.
 */
export function canonicalRow(input: unknown, opts: { allowCharger: boolean }): RawRow {
  const out: RawRow = {};
  if (!input || typeof input !== 'object' || Array.isArray(input)) return out;
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    const field = fieldOf(key);
    if (!field) continue;
    if (!opts.allowCharger && CHARGER_FIELDS.includes(field)) continue;
    let s: string | undefined;
    if (typeof value === 'string') s = value.trim();
    else if (typeof value === 'number' && Number.isFinite(value)) s = String(value);
    else if (typeof value === 'bigint') s = value.toString();
    if (s === undefined || s === '') continue;
    if (out[field] === undefined) out[field] = s;
  }
  return out;
}
