// What the database already knows about a request's rows, fetched with one query per kind (not one per
// row): suppressed addresses, existing users, open drafts, external refs, booked EANs, chargers, brands.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { Candidate } from './rows.ts';

export interface ChargerFact {
  id: string;
  serialLower: string;
  brandLower: string | null;
  claimed: boolean;
}

export interface RowFacts {
  suppressed: Set<string>;
  users: Set<string>;
  openDrafts: Set<string>;
  /** external_ref → e-mail addresses (lower case) of this partner's drafts with that ref */
  refs: Map<string, Set<string>>;
  bookedEans: Set<string>;
  /** EAN → e-mail addresses of this partner's open drafts naming it */
  draftEans: Map<string, Set<string>>;
  chargers: Map<string, ChargerFact>;
  brands: Set<string>;
}

const uniq = <T>(xs: (T | null | undefined)[]): T[] => [...new Set(xs.filter((x): x is T => x != null))];

export async function openDraftEmails(db: Db, partnerId: string, emails: string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set();
  const rows = await db
    .selectFrom('partner_drafts')
    .select('email_lower')
    .where('partner_id', '=', partnerId)
    .where('status', '<>', 'claimed')
    .where('email_lower', 'in', emails)
    .execute();
  return new Set(rows.map((r) => r.email_lower));
}

export async function loadFacts(db: Db, partnerId: string, rows: Candidate[]): Promise<RowFacts> {
  const emails = uniq(rows.map((r) => r.emailLower));
  const refs = uniq(rows.map((r) => r.external_ref));
  const eans = uniq(rows.map((r) => r.ean));
  const serials = uniq(rows.map((r) => r.charger?.serial?.toLowerCase()));

  const facts: RowFacts = {
    suppressed: new Set(),
    users: new Set(),
    openDrafts: await openDraftEmails(db, partnerId, emails),
    refs: new Map(),
    bookedEans: new Set(),
    draftEans: new Map(),
    chargers: new Map(),
    brands: new Set(),
  };
  if (emails.length) {
    const sup = await db.selectFrom('email_suppressions').select('email_lower').where('email_lower', 'in', emails).execute();
    sup.forEach((r) => facts.suppressed.add(r.email_lower));
    const users = await db
      .selectFrom('users')
      .select(sql<string>`lower(email)`.as('e'))
      .where(sql<string>`lower(email)`, 'in', emails)
      .execute();
    users.forEach((r) => facts.users.add(r.e));
  }
  if (refs.length) {
    const rs = await db
      .selectFrom('partner_drafts')
      .select(['external_ref', 'email_lower'])
      .where('partner_id', '=', partnerId)
      .where('external_ref', 'in', refs)
      .execute();
    for (const r of rs) {
      const set = facts.refs.get(r.external_ref!) ?? new Set<string>();
      set.add(r.email_lower);
      facts.refs.set(r.external_ref!, set);
    }
  }
  if (eans.length) {
    const cs = await db.selectFrom('connections').select('ean_code').where('status', '=', 'active').where('ean_code', 'in', eans).execute();
    cs.forEach((c) => facts.bookedEans.add(c.ean_code));
    // an open draft of this partner already names the EAN for another customer
    const ds = await db
      .selectFrom('partner_drafts')
      .select(['ean_code', 'email_lower'])
      .where('partner_id', '=', partnerId)
      .where('status', '<>', 'claimed')
      .where('ean_code', 'in', eans)
      .execute();
    for (const d of ds) {
      const set = facts.draftEans.get(d.ean_code!) ?? new Set<string>();
      set.add(d.email_lower);
      facts.draftEans.set(d.ean_code!, set);
    }
  }
  if (rows.some((r) => r.charger)) {
    const brands = await db.selectFrom('catalog_models').select(sql<string>`lower(brand)`.as('b')).distinct().execute();
    brands.forEach((b) => facts.brands.add(b.b));
  }
  if (serials.length) {
    const cs = await db
      .selectFrom('chargers as c')
      .leftJoin('accounts as a', 'a.id', 'c.account_id')
      .leftJoin('catalog_models as m', 'm.id', 'c.catalog_model_id')
      .select([
        'c.id',
        sql<string>`lower(c.serial_number)`.as('serial_lower'),
        sql<string | null>`lower(m.brand)`.as('brand_lower'),
        sql<boolean>`(c.owner_user_id is not null or a.owner_user_id is not null)`.as('owned'),
        sql<boolean>`exists (select 1 from partner_drafts d where d.charger_id = c.id and d.status <> 'claimed')`.as('drafted'),
      ])
      .where('c.partner_id', '=', partnerId)
      .where('c.status', '=', 'active')
      .where(sql<string>`lower(c.serial_number)`, 'in', serials)
      .execute();
    for (const c of cs) {
      facts.chargers.set(c.serial_lower, { id: c.id, serialLower: c.serial_lower, brandLower: c.brand_lower, claimed: c.owned || c.drafted });
    }
  }
  return facts;
}
