// D145: the suppression list as the operator manages it: read a page of it, and take an address off it again (a
// bounce that was temporary, a manual entry made in error). An unsubscribe its owner made is the owner's own choice and
// is not the operator's to undo; one the operator entered is (D171).
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { isoUtc } from '../../lib/time.ts';
import { DomainError } from '../errors.ts';
import { validEmail } from '../../lib/email.ts';
import type { SuppressionSource } from '../../db/tables/partner.ts';

export interface SuppressionView {
  email: string;
  reason: string;
  /** D171: link (its owner, through the unsubscribe link), operator, delivery (a bounce); null: before migration 0075 */
  source: SuppressionSource | null;
  detail: string | null;
  created_at: string;
}

/** GET /admin/suppressions: newest first, a page at a time, `email` filtering on part of the address. */
export async function listSuppressions(
  deps: Deps,
  q: { email?: string | undefined; limit: number; offset: number },
): Promise<{ suppressions: SuppressionView[]; limit: number; offset: number; count: number }> {
  let base = deps.db.selectFrom('email_suppressions');
  const part = q.email?.trim().toLowerCase();
  if (part) base = base.where('email_lower', 'like', `%${part.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  const { n } = await base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await base.selectAll().orderBy('created_at', 'desc').orderBy('email_lower').limit(q.limit).offset(q.offset).execute();
  return {
    suppressions: rows.map((r) => ({ email: r.email_lower, reason: r.reason, source: r.source, detail: r.detail, created_at: isoUtc(r.created_at) })),
    limit: q.limit,
    offset: q.offset,
    count: Number(n),
  };
}

/**
 * DELETE /admin/suppressions/:email: a bounce or manual entry is removed, and so is an unsubscribe the operator entered
 * (D171); an unsubscribe its owner made through the link in an e-mail stays (409), and so does one recorded before the
 * list kept who made an entry (it may be the owner's own; the 409 says so without claiming it).
 */
export async function removeSuppression(deps: Deps, email: string): Promise<{ email: string; removed: true }> {
  // an address that cannot be one (a NUL, no @) is on no list and never reaches the database
  const address = validEmail(email)?.toLowerCase();
  if (!address) throw new DomainError('suppression_not_found', 'No such address on the suppression list');
  const row = await deps.db.selectFrom('email_suppressions').select(['reason', 'source', 'created_at']).where('email_lower', '=', address).executeTakeFirst();
  if (!row) throw new DomainError('suppression_not_found', `${address} is not on the suppression list`);
  if (row.reason === 'unsubscribe' && row.source === 'link') {
    throw new DomainError(
      'suppression_unsubscribed',
      `${address} unsubscribed through the link in one of its e-mails (${isoUtc(row.created_at)}); only its owner can undo that, not the operator`,
    );
  }
  if (row.reason === 'unsubscribe' && row.source === null) {
    throw new DomainError(
      'suppression_unsubscribed',
      `${address} is on the list as an unsubscribe recorded before the list kept who made an entry; it may be its owner's own, so the operator cannot take it off`,
    );
  }
  await deps.db
    .deleteFrom('email_suppressions')
    .where('email_lower', '=', address)
    .where(sql<boolean>`not (reason = 'unsubscribe' and (source is null or source = 'link'))`)
    .execute();
  return { email: address, removed: true };
}
