// C2.8: ERE eligibility is derived, never stored: a validated EAN (matched), an active mandate, an active
// connection, a registered MID charger and an IBAN present. account_ere_eligible and ere_eligible report it.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';

export interface EligibilityFacts {
  ean_matched: boolean;
  mandate_active: boolean;
  connection_active: boolean;
  mid_charger: boolean;
  iban_present: boolean;
  /** one active connection that is both matched and signed (the same condition as eligibleSql) */
  connection_ready: boolean;
}

export async function eligibilityFacts(db: Db, accountId: string): Promise<EligibilityFacts> {
  const row = await db
    .selectFrom('accounts as a')
    .select([
      sql<boolean>`a.iban_encrypted is not null`.as('iban_present'),
      sql<boolean>`exists (select 1 from connections c where c.account_id = a.id and c.status = 'active')`.as('connection_active'),
      sql<boolean>`exists (select 1 from connections c where c.account_id = a.id and c.status = 'active' and c.ean_validation_status = 'matched')`.as('ean_matched'),
      sql<boolean>`exists (select 1 from connections c where c.account_id = a.id and c.status = 'active' and c.mandate_status = 'active')`.as('mandate_active'),
      sql<boolean>`exists (select 1 from chargers ch where ch.account_id = a.id and ch.status = 'active' and ch.mid_certified)`.as('mid_charger'),
      sql<boolean>`exists (select 1 from connections c where c.account_id = a.id and c.status = 'active' and c.ean_validation_status = 'matched' and c.mandate_status = 'active')`.as('connection_ready'),
    ])
    .where('a.id', '=', accountId)
    .executeTakeFirst();
  return {
    ean_matched: !!row?.ean_matched,
    mandate_active: !!row?.mandate_active,
    connection_active: !!row?.connection_active,
    mid_charger: !!row?.mid_charger,
    iban_present: !!row?.iban_present,
    connection_ready: !!row?.connection_ready,
  };
}

export function isEligible(f: EligibilityFacts): boolean {
  return f.ean_matched && f.mandate_active && f.connection_active && f.connection_ready && f.mid_charger && f.iban_present;
}

export async function isAccountEreEligible(db: Db, accountId: string): Promise<boolean> {
  return isEligible(await eligibilityFacts(db, accountId));
}

/** SQL condition over an accounts alias `a` — for list queries that report ere_eligible per row. */
export const eligibleSql = (alias = 'a') =>
  sql<boolean>`(${sql.raw(alias)}.iban_encrypted is not null
    and exists (select 1 from connections c where c.account_id = ${sql.raw(alias)}.id and c.status = 'active'
                and c.ean_validation_status = 'matched' and c.mandate_status = 'active')
    and exists (select 1 from chargers ch where ch.account_id = ${sql.raw(alias)}.id and ch.status = 'active' and ch.mid_certified))`;
