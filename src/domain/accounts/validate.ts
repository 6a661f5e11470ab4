// Body checks of POST /v1/accounts (spec §4.1), in the order of the spec's error list:
// invalid_type, invalid_payout_handler, invalid_iban, person_required, invalid_ean, address_required.
// The route accepts a loose body so that these exact codes come out (not the generic invalid_request).
import type { Deps } from '../../deps.ts';
import type { AccountType, PayoutHandler } from '../../db/tables/core.ts';
import { DomainError } from '../errors.ts';
import { assertEanFormat, normaliseEan } from '../ean/index.ts';

export const ACCOUNT_TYPES: readonly AccountType[] = ['particulier', 'zakelijk', 'vve'];
export const PAYOUT_HANDLERS: readonly PayoutHandler[] = ['joulo_pays_customer', 'via_cpo_invoicing'];
export const MAX_TEXT = 120;

export interface PersonInput {
  full_name: string;
  email: string | null;
  phone: string | null;
}

export interface ConnectionInput {
  ean_code: string;
  street: string;
  house_number: string;
  house_number_addition: string | null;
  postal_code: string;
  city: string;
}

export interface CreateAccountInput {
  type: AccountType;
  display_name: string | null;
  cpo_external_ref: string | null;
  payout_handler: PayoutHandler;
  /** normalised IBAN, or null when absent */
  iban: string | null;
  person: PersonInput;
  connection: ConnectionInput;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Optional text: absent/null → null; trimmed; cut to `max` characters (spec §8); blank → null. */
export function optionalText(v: unknown, field: string, max = MAX_TEXT): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new DomainError('invalid_request', `${field} must be a string.`);
  const t = v.trim().slice(0, max).trim();
  return t === '' ? null : t;
}

/** spec §4.1: whitespace removed, upper-cased, then 15–34 letters and digits; null or '' = absent. */
export function normaliseIban(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new DomainError('invalid_iban', 'iban must be a string or null.');
  const s = v.replace(/\s+/g, '').toUpperCase();
  if (s === '') return null;
  if (!/^[A-Z0-9]{15,34}$/.test(s)) {
    throw new DomainError('invalid_iban', 'iban must be 15 to 34 letters and digits after removing whitespace.');
  }
  return s;
}

export function parsePerson(v: unknown): PersonInput {
  if (!isObject(v) || typeof v.full_name !== 'string' || v.full_name.trim() === '') {
    throw new DomainError('person_required', 'person.full_name is required.');
  }
  return {
    full_name: v.full_name.trim().slice(0, 200),
    email: optionalText(v.email, 'person.email', 254),
    phone: optionalText(v.phone, 'person.phone', 40),
  };
}

/** An address field as given: a non-blank string (a house number may come as a number). */
export function addressField(v: unknown): string | null {
  if (typeof v === 'number' && Number.isInteger(v) && v > 0) return String(v);
  if (typeof v !== 'string') return null;
  const t = v.trim().slice(0, 200);
  return t === '' ? null : t;
}

export const ADDRESS_FIELDS = ['street', 'house_number', 'postal_code', 'city'] as const;

/** connection object of a create: EAN (invalid_ean) then the four address fields (address_required). */
export function parseConnection(deps: Deps, v: unknown): ConnectionInput {
  const c = isObject(v) ? v : {};
  const ean = typeof c.ean_code === 'string' ? normaliseEan(c.ean_code) : c.ean_code;
  if (ean === undefined || ean === null || ean === '') {
    throw new DomainError('invalid_ean', 'connection.ean_code is required (18 digits).');
  }
  assertEanFormat(deps, ean);
  const missing = ADDRESS_FIELDS.filter((f) => addressField(c[f]) === null);
  if (missing.length) {
    throw new DomainError('address_required', `connection needs ${missing.map((f) => `connection.${f}`).join(', ')}.`);
  }
  return {
    ean_code: ean,
    street: addressField(c.street)!,
    house_number: addressField(c.house_number)!,
    house_number_addition: optionalText(c.house_number_addition, 'connection.house_number_addition', 20),
    postal_code: addressField(c.postal_code)!,
    city: addressField(c.city)!,
  };
}

export function parseCreateAccountBody(deps: Deps, raw: unknown): CreateAccountInput {
  const b = isObject(raw) ? raw : {};
  const type = b.type ?? 'particulier';
  if (typeof type !== 'string' || !ACCOUNT_TYPES.includes(type as AccountType)) {
    throw new DomainError('invalid_type', `type must be one of ${ACCOUNT_TYPES.join(', ')}.`);
  }
  const payout = b.payout_handler ?? 'joulo_pays_customer';
  if (typeof payout !== 'string' || !PAYOUT_HANDLERS.includes(payout as PayoutHandler)) {
    throw new DomainError('invalid_payout_handler', `payout_handler must be one of ${PAYOUT_HANDLERS.join(', ')}.`);
  }
  const iban = normaliseIban(b.iban);
  const person = parsePerson(b.person);
  const connection = parseConnection(deps, b.connection);
  return {
    type: type as AccountType,
    display_name: optionalText(b.display_name, 'display_name'),
    cpo_external_ref: optionalText(b.cpo_external_ref, 'cpo_external_ref'),
    payout_handler: payout as PayoutHandler,
    iban,
    person,
    connection,
  };
}
