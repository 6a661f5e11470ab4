// Dutch field rules for draft rows (issue 7 item 3, C3.2). Pure functions: a value in, a normalised value
// (or null when invalid) out. Decisions the specification leaves open are listed in docs/partner.md.
import { hasValidCheckDigit, isEighteenDigits, looksDutch } from '../ean/ean.ts';
import { validEmail } from '../../lib/email.ts';
import { cutText } from '../../lib/nul.ts';

export { validEmail };


const RESERVED_DOMAINS = ['example.com', 'example.org', 'example.net'];
const RESERVED_TLDS = ['test', 'example', 'invalid', 'localhost'];

/** C3.2 reserved_domain: RFC 2606 / 6761 names (and their subdomains). */
export function isReservedDomain(email: string): boolean {
  const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
  if (RESERVED_DOMAINS.some((d) => domain === d || domain.endsWith('.' + d))) return true;
  const tld = domain.slice(domain.lastIndexOf('.') + 1);
  return RESERVED_TLDS.includes(tld);
}

/**
 * Dutch postal code: four digits (no leading zero) and two letters, returned as `1234 AB`.
 * The letter pairs SA, SD and SS are never issued (PostNL), so they are invalid.
 */
export function validPostalCode(raw: string | undefined): string | null {
  if (!raw) return null;
  const m = /^([1-9]\d{3})\s?([A-Za-z]{2})$/.exec(raw.trim());
  if (!m) return null;
  const letters = m[2]!.toUpperCase();
  if (letters === 'SA' || letters === 'SD' || letters === 'SS') return null;
  return `${m[1]} ${letters}`;
}

/**
 * House number 1–99999 (no leading zero), optionally with an addition written after it ("12A", "12-2",
 * "12 bis") or in its own field. An addition is 1–6 letters or digits. Both given and different → invalid.
 */
export function validHouseNumber(
  rawNumber: string | undefined,
  rawAddition: string | undefined,
): { house_number: string; house_number_addition: string | null } | null {
  if (!rawNumber) return null;
  // after a separator ("12-2", "12 bis") any 1–6 letters/digits; glued to the number ("12A") it starts with a letter
  const m = /^([1-9]\d{0,4})(?:(?:\s*[-/]\s*|\s+)([A-Za-z0-9]{1,6})|([A-Za-z][A-Za-z0-9]{0,5}))?$/.exec(rawNumber.trim());
  if (!m) return null;
  const add = m[2] ?? m[3];
  const inline = add ? add.toUpperCase() : null;
  let separate: string | null = null;
  if (rawAddition !== undefined && rawAddition.trim() !== '') {
    const a = rawAddition.trim().replace(/^[-\s]+/, '');
    if (!/^[A-Za-z0-9]{1,6}$/.test(a)) return null;
    separate = a.toUpperCase();
  }
  if (inline && separate && inline !== separate) return null;
  return { house_number: m[1]!, house_number_addition: separate ?? inline };
}

/** KvK number: exactly 8 digits (spaces and dots are tolerated in the input). */
export function validKvk(raw: string | undefined): string | null {
  if (!raw) return null;
  const s = raw.replace(/[\s.]/g, '');
  return /^\d{8}$/.test(s) ? s : null;
}

/** Dutch BTW (VAT) number: NL + 9 digits + B + 2 digits, e.g. NL123456789B01. */
export function validBtw(raw: string | undefined): string | null {
  if (!raw) return null;
  const s = raw.replace(/[\s.-]/g, '').toUpperCase();
  return /^NL\d{9}B\d{2}$/.test(s) ? s : null;
}

/** EAN of a Dutch connection: 18 digits, starts with 871, GS1 mod-10 check digit. */
export function validEan(raw: string | undefined): string | null {
  if (!raw) return null;
  const s = raw.replace(/\s+/g, '');
  return isEighteenDigits(s) && looksDutch(s) && hasValidCheckDigit(s) ? s : null;
}

export type DraftType = 'particulier' | 'zakelijk' | 'vve';

/** type / soort: particulier (default), zakelijk, vve; a few English words are accepted too. */
export function validType(raw: string | undefined): DraftType | null {
  if (!raw) return 'particulier';
  const s = raw.trim().toLowerCase();
  if (s === 'particulier' || s === 'private' || s === 'consumer') return 'particulier';
  if (s === 'zakelijk' || s === 'business' || s === 'bedrijf') return 'zakelijk';
  if (s === 'vve' || s === 'hoa') return 'vve';
  return null;
}

/** Free text trimmed to 120 characters (the spec's limit for display names), null when empty. */
export function text120(raw: string | undefined): string | null {
  if (!raw) return null;
  const s = raw.trim().replace(/\s+/g, ' ');
  return s ? cutText(s, 120) : null;
}
