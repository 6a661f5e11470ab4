// EAN codes and addresses (spec §2, §4.1; C2.7): format checks shared by create, update and the partner claim.

/** Remove whitespace; a valid EAN is then exactly 18 digits. */
export function normaliseEan(raw: string): string {
  return raw.replace(/\s+/g, '');
}

export const isEighteenDigits = (ean: string): boolean => /^\d{18}$/.test(ean);

/** spec §2: a Dutch connection EAN starts with 871. */
export const looksDutch = (ean: string): boolean => ean.startsWith('871');

/** GS1 mod-10 check digit over the first 17 digits (weights 3,1,3,… from the right). */
export function gs1CheckDigit(first17: string): number {
  let sum = 0;
  for (let i = 0; i < first17.length; i++) {
    const d = first17.charCodeAt(first17.length - 1 - i) - 48;
    sum += d * (i % 2 === 0 ? 3 : 1);
  }
  return (10 - (sum % 10)) % 10;
}

export function hasValidCheckDigit(ean: string): boolean {
  return isEighteenDigits(ean) && gs1CheckDigit(ean.slice(0, 17)) === Number(ean[17]);
}

/** Postal codes compare upper case without spaces ("1234 ab" = "1234AB"). */
export const normalisePostalCode = (s: string): string => s.replace(/\s+/g, '').toUpperCase();
export const normaliseHouseNumber = (s: string): string => s.trim().toUpperCase();
export const normaliseAddition = (s: string | null | undefined): string => (s ?? '').replace(/[\s-]+/g, '').toUpperCase();

export interface ConnectionAddress {
  street: string;
  house_number: string;
  house_number_addition: string | null;
  postal_code: string;
  city: string;
}

export function formatAddress(a: ConnectionAddress): string {
  const num = a.house_number + (a.house_number_addition ? ` ${a.house_number_addition}` : '');
  return `${a.street} ${num}, ${a.postal_code} ${a.city}`;
}
