// POST /v1/accounts (spec §4.1 rules 1–6) and the concept account of a claimed partner draft (C3.4).
// Races are settled by unique indexes inside one transaction (ARCHITECTURE.md: idempotency by content):
// accounts_partner_ref for cpo_external_ref, connections_active_ean for the EAN.
import type { Deps } from '../../deps.ts';
import type { Db } from '../../db/database.ts';
import type { AccountType, PayoutHandler } from '../../db/tables/core.ts';
import { DomainError } from '../errors.ts';
import { assertEanFree, eanInUse, isEanUniqueViolation, validateEanAgainstRegister } from '../ean/index.ts';
import { isoSeconds } from './format.ts';
import { connectionOf, optionalText, personOf, type ConnectionInput, type CreateAccountInput, type PersonInput } from './validate.ts';

export interface AccountSummary {
  id: string;
  type: AccountType;
  display_name: string | null;
  payout_handler: PayoutHandler;
  cpo_external_ref: string | null;
  created_at: string;
}

/**
 * What POST /v1/accounts did: created the account with its connection, or (spec §4.1 rules 1–3) found the account
 * of this cpo_external_ref, storing only a newly sent IBAN.
 */
export type CreateAccountResult =
  | {
      created: true;
      account: AccountSummary;
      connectionId: string;
      locationId: string;
      eanValidationStatus: 'matched' | 'unverified';
      ibanStored: boolean;
      mandateStatus: 'pending';
    }
  | { created: false; account: AccountSummary; ibanStored: boolean; mandateStatus: 'pending' | 'active' };

interface AccountRow {
  id: string;
  type: AccountType;
  display_name: string | null;
  payout_handler: PayoutHandler;
  cpo_external_ref: string | null;
  created_at: Date;
}

const summary = (a: AccountRow): AccountSummary => ({
  id: a.id,
  type: a.type,
  display_name: a.display_name,
  payout_handler: a.payout_handler,
  cpo_external_ref: a.cpo_external_ref,
  created_at: isoSeconds(a.created_at),
});

const ACCOUNT_COLUMNS = ['id', 'type', 'display_name', 'payout_handler', 'cpo_external_ref', 'created_at'] as const;

/** Current mandate status of an account: active once its active connection's machtiging is signed. */
export async function accountMandateStatus(db: Db, accountId: string): Promise<'pending' | 'active'> {
  const row = await db
    .selectFrom('connections')
    .select('id')
    .where('account_id', '=', accountId)
    .where('status', '=', 'active')
    .where('mandate_status', '=', 'active')
    .executeTakeFirst();
  return row ? 'active' : 'pending';
}

/** spec §4.1 rules 1–3: the existing account; only a newly sent IBAN is stored, every other field ignored. */
async function idempotentRepost(deps: Deps, account: AccountRow, iban: string | null): Promise<CreateAccountResult> {
  if (iban) {
    await deps.db
      .updateTable('accounts')
      .set({ iban_encrypted: deps.cipher.encrypt(iban), updated_at: deps.clock() })
      .where('id', '=', account.id)
      .execute();
  }
  return { created: false, account: summary(account), ibanStored: iban !== null, mandateStatus: await accountMandateStatus(deps.db, account.id) };
}

async function findByRef(db: Db, partnerId: string, ref: string): Promise<AccountRow | undefined> {
  return db
    .selectFrom('accounts')
    .select(ACCOUNT_COLUMNS)
    .where('partner_id', '=', partnerId)
    .where('cpo_external_ref', '=', ref)
    .executeTakeFirst();
}

/** rule 2: a re-post must still pass the body checks: `input` is the checked body (validate.ts accountInputOf). */
export async function createCpoAccount(deps: Deps, partnerId: string, input: CreateAccountInput): Promise<CreateAccountResult> {
  const ref = input.cpo_external_ref;
  if (ref) {
    const existing = await findByRef(deps.db, partnerId, ref);
    if (existing) return idempotentRepost(deps, existing, input.iban);
  }
  try {
    return await createNew(deps, partnerId, input);
  } catch (err) {
    // rule 1 under a race: a concurrent request with the same key committed its account (and so its EAN)
    // between our lookup and our EAN check; that is a re-post, not a conflict
    if (ref && err instanceof DomainError && err.code === 'ean_in_use') {
      const existing = await findByRef(deps.db, partnerId, ref);
      if (existing) return idempotentRepost(deps, existing, input.iban);
    }
    throw err;
  }
}

async function createNew(deps: Deps, partnerId: string, input: CreateAccountInput): Promise<CreateAccountResult> {
  const ref = input.cpo_external_ref;
  // rules 4–6 (read checks first; the unique index decides under a race)
  await assertEanFree(deps, input.connection.ean_code);
  const eanStatus = await validateEanAgainstRegister(deps, input.connection.ean_code, input.connection);

  const now = deps.clock();
  const created = await deps.db.transaction().execute(async (trx) => {
    const account = await trx
      .insertInto('accounts')
      .values({
        partner_id: partnerId,
        access_channel: 'cpo_api',
        type: input.type,
        display_name: input.display_name,
        cpo_external_ref: ref,
        payout_handler: input.payout_handler,
        iban_encrypted: input.iban ? deps.cipher.encrypt(input.iban) : null,
        signatory_full_name: input.person.full_name,
        signatory_email: input.person.email,
        signatory_phone: input.person.phone,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.columns(['partner_id', 'cpo_external_ref']).where('cpo_external_ref', 'is not', null).doNothing())
      .returning(ACCOUNT_COLUMNS)
      .executeTakeFirst();
    if (!account) return null; // rule 1 under a race: another request created it first
    const connection = await insertConnection(trx, account.id, input.connection, eanStatus, now);
    return { account, connection };
  });
  if (!created) {
    const existing = await findByRef(deps.db, partnerId, ref!);
    if (!existing) throw new DomainError('account_create_failed', 'The account could not be created; retry the request.');
    return idempotentRepost(deps, existing, input.iban);
  }
  return {
    created: true,
    account: summary(created.account),
    connectionId: created.connection.id,
    locationId: created.connection.location_id,
    eanValidationStatus: eanStatus,
    ibanStored: input.iban !== null,
    mandateStatus: 'pending',
  };
}

async function insertConnection(
  trx: Db,
  accountId: string,
  c: ConnectionInput,
  eanStatus: 'matched' | 'unverified',
  now: Date,
): Promise<{ id: string; location_id: string }> {
  try {
    return await trx
      .insertInto('connections')
      .values({
        account_id: accountId,
        ean_code: c.ean_code,
        street: c.street,
        house_number: c.house_number,
        house_number_addition: c.house_number_addition,
        postal_code: c.postal_code,
        city: c.city,
        ean_validation_status: eanStatus,
        ean_checked_at: now,
        created_at: now,
        updated_at: now,
      })
      .returning(['id', 'location_id'])
      .executeTakeFirstOrThrow();
  } catch (err) {
    if (isEanUniqueViolation(err)) throw eanInUse(c.ean_code);
    throw err;
  }
}

export interface ConceptAccountInput {
  partnerId: string | null;
  /** e.g. 'partner_claim' (C3.4); 'cpo_api' is for POST /v1/accounts */
  accessChannel: 'partner_claim' | 'personal';
  ownerUserId?: string | null;
  type?: AccountType;
  displayName?: string | null;
  /** normalised (normaliseIban); stored encrypted */
  iban?: string | null;
  person: { full_name: string; email?: string | null; phone?: string | null };
  connection: {
    ean_code: string;
    street: string;
    house_number: string;
    house_number_addition?: string | null;
    postal_code: string;
    city: string;
  };
}

/**
 * A concept account with one connection, without a CPO partner or idempotency key (the partner claim page,
 * C3.4). Same EAN rules as POST /v1/accounts: format (400 invalid_ean), address (400 address_required),
 * free (409 ean_in_use), Dutch and the register (422 ean_not_dutch / ean_address_mismatch) on production.
 */
export async function createConceptAccount(
  deps: Deps,
  input: ConceptAccountInput,
): Promise<{ account_id: string; connection_id: string }> {
  const person: PersonInput = personOf(input.person);
  const connection = connectionOf(deps, input.connection);
  await assertEanFree(deps, connection.ean_code);
  const eanStatus = await validateEanAgainstRegister(deps, connection.ean_code, connection);
  const now = deps.clock();
  return deps.db.transaction().execute(async (trx) => {
    const account = await trx
      .insertInto('accounts')
      .values({
        partner_id: input.partnerId,
        owner_user_id: input.ownerUserId ?? null,
        access_channel: input.accessChannel,
        type: input.type ?? 'particulier',
        display_name: optionalText(input.displayName),
        signatory_full_name: person.full_name,
        signatory_email: person.email,
        signatory_phone: person.phone,
        iban_encrypted: input.iban ? deps.cipher.encrypt(input.iban) : null,
        created_at: now,
        updated_at: now,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const conn = await insertConnection(trx, account.id, connection, eanStatus, now);
    return { account_id: account.id, connection_id: conn.id };
  });
}
