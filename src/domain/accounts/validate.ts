// The input of a new account (POST /v1/accounts, spec §4.1, and the claim page's concept account, C3.4), typed as
// the contract gives it: schemas/http/accounts.ts has checked every field's type and answered the spec's codes
// (invalid_type … address_required). What stays here is what a schema cannot do: normalising (trim, cut to the
// spec's lengths, the IBAN and EAN without spaces) and the checks that depend on the environment (the EAN's GS1
// check digit on production) or on data (an address field left blank on the claim page).
import type { Deps } from '../../deps.ts';
import type { AccountType, ConnectionsTable, PayoutHandler } from '../../db/tables/core.ts';
import { DomainError } from '../errors.ts';
import { assertEanFormat, normaliseEan } from '../ean/index.ts';
import { normaliseExternalRef } from './external-ref.ts';

export const MAX_TEXT = 120;

export interface PersonInput {
  full_name: string;
  email: string | null;
  phone: string | null;
}

/** A connection's EAN and address, normalised, as the connections table stores them. */
export type ConnectionInput = Pick<ConnectionsTable, 'ean_code' | 'street' | 'house_number' | 'house_number_addition' | 'postal_code' | 'city'>;

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

/** An address field as sent: a string, or (house number) a positive integer. */
export type AddressValue = string | number;

export interface PersonRequest {
  full_name: string;
  email?: string | null | undefined;
  phone?: string | null | undefined;
}

export interface ConnectionRequest {
  ean_code: string;
  street: AddressValue;
  house_number: AddressValue;
  postal_code: AddressValue;
  city: AddressValue;
  house_number_addition?: string | null | undefined;
}

/** A POST /v1/accounts body as schemas/http/accounts.ts (CreateAccountBody) gives it. */
export interface CreateAccountRequest {
  type?: AccountType | null | undefined;
  payout_handler?: PayoutHandler | null | undefined;
  iban?: string | null | undefined;
  person: PersonRequest;
  connection: ConnectionRequest;
  display_name?: string | null | undefined;
  cpo_external_ref?: string | null | undefined;
}

/** Optional text: absent/null → null; trimmed; cut to `max` characters (spec §8); blank → null. */
export function optionalText(v: string | null | undefined, max = MAX_TEXT): string | null {
  if (v === undefined || v === null) return null;
  const t = v.trim().slice(0, max).trim();
  return t === '' ? null : t;
}

/** spec §4.1: whitespace removed, upper-cased, then 15–34 letters and digits; null or '' = absent. */
export function normaliseIban(v: string | null | undefined): string | null {
  if (v === undefined || v === null) return null;
  const s = v.replace(/\s+/g, '').toUpperCase();
  if (s === '') return null;
  if (!/^[A-Z0-9]{15,34}$/.test(s)) {
    throw new DomainError('invalid_iban', 'iban must be 15 to 34 letters and digits after removing whitespace.');
  }
  return s;
}

export function personOf(p: PersonRequest): PersonInput {
  const fullName = p.full_name.trim().slice(0, 200);
  if (fullName === '') throw new DomainError('person_required', 'person.full_name is required.');
  return { full_name: fullName, email: optionalText(p.email, 254), phone: optionalText(p.phone, 40) };
}

/** An address field as given: a non-blank string (a house number may come as a number); null when blank. */
export function addressField(v: unknown): string | null {
  if (typeof v === 'number' && Number.isInteger(v) && v > 0) return String(v);
  if (typeof v !== 'string') return null;
  const t = v.trim().slice(0, 200);
  return t === '' ? null : t;
}

export const ADDRESS_FIELDS = ['street', 'house_number', 'postal_code', 'city'] as const;

/** The connection of a new account: the EAN (invalid_ean, the check digit on production), then the address. */
export function connectionOf(deps: Deps, c: ConnectionRequest): ConnectionInput {
  const ean = normaliseEan(c.ean_code);
  if (ean === '') throw new DomainError('invalid_ean', 'connection.ean_code is required (18 digits).');
  assertEanFormat(deps, ean);
  const missing = ADDRESS_FIELDS.filter((f) => addressField(c[f]) === null);
  if (missing.length) {
    throw new DomainError('address_required', `connection needs ${missing.map((f) => `connection.${f}`).join(', ')}.`);
  }
  return {
    ean_code: ean,
    street: addressField(c.street)!,
    house_number: addressField(c.house_number)!,
    house_number_addition: optionalText(c.house_number_addition, 20),
    postal_code: addressField(c.postal_code)!,
    city: addressField(c.city)!,
  };
}

/** The new account a POST /v1/accounts body asks for, normalised, with the spec's defaults. */
export function accountInputOf(deps: Deps, b: CreateAccountRequest): CreateAccountInput {
  return {
    type: b.type ?? 'particulier',
    display_name: optionalText(b.display_name),
    cpo_external_ref: b.cpo_external_ref == null ? null : normaliseExternalRef(b.cpo_external_ref) || null,
    payout_handler: b.payout_handler ?? 'joulo_pays_customer',
    iban: normaliseIban(b.iban),
    person: personOf(b.person),
    connection: connectionOf(deps, b.connection),
  };
}
