// GET /v1/accounts (spec §4.1, C2.1, C6.2): only CPO-API accounts of the caller's partner, with signatory and
// every connection (archived included). count is the total matching the filter.
import type { Deps } from '../../deps.ts';
import type { AccountType, PayoutHandler } from '../../db/tables/core.ts';
import { isoOrNull, isoSeconds } from './format.ts';
import { normaliseExternalRef } from './external-ref.ts';

export interface ListedConnection {
  connection_id: string;
  ean_code: string;
  status: 'active' | 'archived';
  registration_status: 'concept' | 'ingediend';
  ean_validation_status: 'matched' | 'mismatched' | 'unverified';
  mandate_status: 'pending' | 'active';
  mandate_valid_from: string | null;
}

export interface ListedAccount {
  id: string;
  type: AccountType;
  display_name: string | null;
  cpo_external_ref: string | null;
  payout_handler: PayoutHandler;
  created_at: string;
  /** the list holds only the accounts created through the CPO API */
  access_channel: 'cpo_api';
  signatory: { full_name: string | null; email: string | null };
  connections: ListedConnection[];
}

export interface ListAccountsQuery {
  limit: number;
  offset: number;
  cpo_external_ref?: string | undefined;
}

export async function listCpoAccounts(
  deps: Deps,
  partnerId: string,
  q: ListAccountsQuery,
): Promise<{ accounts: ListedAccount[]; limit: number; offset: number; count: number }> {
  let base = deps.db
    .selectFrom('accounts')
    .where('partner_id', '=', partnerId)
    .where('access_channel', '=', 'cpo_api');
  if (q.cpo_external_ref !== undefined) base = base.where('cpo_external_ref', '=', normaliseExternalRef(q.cpo_external_ref));
  const { n } = await base.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const rows = await base
    .select(['id', 'type', 'display_name', 'cpo_external_ref', 'payout_handler', 'created_at', 'access_channel', 'signatory_full_name', 'signatory_email'])
    .orderBy('created_at')
    .orderBy('id')
    .limit(q.limit)
    .offset(q.offset)
    .execute();
  const ids = rows.map((r) => r.id);
  const conns = ids.length
    ? await deps.db
        .selectFrom('connections')
        .select(['id', 'account_id', 'ean_code', 'status', 'registration_status', 'ean_validation_status', 'mandate_status', 'mandate_valid_from'])
        .where('account_id', 'in', ids)
        .orderBy('created_at')
        .orderBy('id')
        .execute()
    : [];
  const byAccount = new Map<string, ListedConnection[]>();
  for (const c of conns) {
    const list = byAccount.get(c.account_id) ?? [];
    list.push({
      connection_id: c.id,
      ean_code: c.ean_code,
      status: c.status,
      registration_status: c.registration_status,
      ean_validation_status: c.ean_validation_status,
      mandate_status: c.mandate_status,
      mandate_valid_from: isoOrNull(c.mandate_valid_from),
    });
    byAccount.set(c.account_id, list);
  }
  return {
    accounts: rows.map((r) => ({
      id: r.id,
      type: r.type,
      display_name: r.display_name,
      cpo_external_ref: r.cpo_external_ref,
      payout_handler: r.payout_handler,
      created_at: isoSeconds(r.created_at),
      access_channel: 'cpo_api' as const, // the query takes only these
      signatory: { full_name: r.signatory_full_name, email: r.signatory_email },
      connections: byAccount.get(r.id) ?? [],
    })),
    limit: q.limit,
    offset: q.offset,
    count: Number(n),
  };
}
