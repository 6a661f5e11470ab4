// D145: the suppression list as the operator manages it: read a page of it, and take an address off it again (a
// bounce that was temporary, a manual entry made in error). An unsubscribe is the address owner's own choice and is
// not the operator's to undo.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { isoUtc } from '../../lib/time.ts';
import { DomainError } from '../errors.ts';
import { validEmail } from '../../lib/email.ts';

export interface SuppressionView {
  email: string;
  reason: string;
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
    suppressions: rows.map((r) => ({ email: r.email_lower, reason: r.reason, detail: r.detail, created_at: isoUtc(r.created_at) })),
    limit: q.limit,
    offset: q.offset,
    count: Number(n),
  };
}

/** DELETE /admin/suppressions/:email: a bounce or manual entry is removed; an unsubscribe stays (409). */
export async function removeSuppression(deps: Deps, email: string): Promise<{ email: string; removed: true }> {
  // an address that cannot be one (a NUL, no @) is on no list and never reaches the database
  const address = validEmail(email)?.toLowerCase();
  if (!address) throw new DomainError('suppression_not_found', 'No such address on the suppression list');
  const row = await deps.db.selectFrom('email_suppressions').select('reason').where('email_lower', '=', address).executeTakeFirst();
  if (!row) throw new DomainError('suppression_not_found', `${address} is not on the suppression list`);
  if (row.reason === 'unsubscribe') {
    throw new DomainError('suppression_unsubscribed', `${address} unsubscribed itself; only its owner can undo that, not the operator`);
  }
  await deps.db.deleteFrom('email_suppressions').where('email_lower', '=', address).where(sql<boolean>`reason <> 'unsubscribe'`).execute();
  return { email: address, removed: true };
}
