// Per-row checks that need no database (C3.2 invalid, reserved_domain, missing_kvk; C3.1 address_ignored
// for invalid_postal_code / invalid_house_number; the EAN format of C3.3 'invalid').
import type { AddressIgnoredReason, PartnerDraftsTable } from '../../db/tables/partner.ts';
import type { RawRow } from './fields.ts';
import type { DraftAddress } from './ean-lookup.ts';
import {
  isReservedDomain,
  text120,
  validBtw,
  validEan,
  validEmail,
  validHouseNumber,
  validKvk,
  validPostalCode,
  validType,
  type DraftType,
} from './validate.ts';
import { SKIP_REASONS } from '../../../schemas/http/partner-enums.ts';
import { cutText, textFaultPath } from '../../lib/nul.ts';

export { SKIP_REASONS };
export type SkipReason = (typeof SKIP_REASONS)[number];

/** A row that becomes a draft: the draft's own columns as partner_drafts stores them, and what the upload derived. */
export interface Candidate extends Pick<PartnerDraftsTable, 'company_name' | 'contact_name' | 'kvk' | 'btw' | 'external_ref' | 'referral_code' | 'city'> {
  index: number;
  email: string;
  emailLower: string;
  name: string;
  type: DraftType;
  address: DraftAddress | null;
  addressIgnored: AddressIgnoredReason | null;
  ean: string | null;
  eanInvalid: boolean;
  charger: { brand: string | null; serial: string | null } | null;
  chargerId: string | null;
}

export type Prepared = { ok: true; row: Candidate } | { ok: false; email: string; reason: SkipReason };

export function prepareRow(raw: RawRow, index: number): Prepared {
  const rawEmail = raw.email ?? '';
  const name = text120(raw.name);
  const email = validEmail(raw.email);
  const type = validType(raw.type);
  // a NUL (PostgreSQL's text cannot hold it) or text that is not UTF-8 (D112) anywhere in the row: the row is
  // invalid, the others go on
  if (!name || !email || !type || textFaultPath(raw)) return { ok: false, email: rawEmail, reason: 'invalid' };
  if (isReservedDomain(email)) return { ok: false, email, reason: 'reserved_domain' };
  const kvk = validKvk(raw.kvk);
  if (type === 'zakelijk' && !kvk) return { ok: false, email, reason: 'missing_kvk' };

  let address: DraftAddress | null = null;
  let addressIgnored: AddressIgnoredReason | null = null;
  if (raw.postal_code || raw.house_number) {
    const pc = validPostalCode(raw.postal_code);
    const hn = validHouseNumber(raw.house_number, raw.house_number_addition);
    if (!pc) addressIgnored = 'invalid_postal_code';
    else if (!hn) addressIgnored = 'invalid_house_number';
    else address = { postal_code: pc, ...hn };
  }
  const ean = validEan(raw.ean);
  const referral = cutText(raw.referral_code?.trim() ?? '', 64) || null;
  return {
    ok: true,
    row: {
      index,
      email,
      emailLower: email.toLowerCase(),
      name,
      type,
      company_name: text120(raw.company_name),
      contact_name: text120(raw.contact_name),
      kvk,
      btw: validBtw(raw.btw),
      external_ref: text120(raw.external_ref),
      referral_code: referral,
      city: text120(raw.city),
      address,
      addressIgnored,
      ean,
      eanInvalid: !!raw.ean && !ean,
      charger:
        raw.charger_brand || raw.charger_serial
          ? { brand: raw.charger_brand?.trim() || null, serial: raw.charger_serial?.trim() || null }
          : null,
      chargerId: null,
    },
  };
}
