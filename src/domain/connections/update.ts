// POST /v1/connections:update (spec §4.1): corrects the EAN or address of a connection the caller created.
// Rule order: target and body checks → connection found and active → rule 3 ere_booked (before comparing with
// stored values) → rule 4 unchanged → rule 2 mandate_signed → rule 1 EAN/address re-validated → write.
import type { Deps } from '../../deps.ts';
import { DomainError } from '../errors.ts';
import {
  assertEanFormat,
  assertEanFree,
  eanInUse,
  isEanUniqueViolation,
  normaliseEan,
  normalisePostalCode,
  validateEanAgainstRegister,
} from '../ean/index.ts';
import { ADDRESS_FIELDS, addressField } from '../accounts/validate.ts';
import { assertActive, assertTarget, findTargetConnection, type ConnectionRow, type TargetInput } from './target.ts';
import { cutText } from '../../lib/nul.ts';

export interface UpdateConnectionResponse {
  ok: true;
  changed: boolean;
  connection_id: string;
  account_id: string;
  ean_code: string;
  ean_validation_status: 'matched' | 'mismatched' | 'unverified';
  registration_status: 'concept' | 'ingediend';
  mandate_status: 'pending' | 'active';
  mandate_revoked: boolean;
}

interface Changes {
  ean_code?: string;
  street?: string;
  house_number?: string;
  postal_code?: string;
  city?: string;
  house_number_addition?: string | null;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function parseChanges(deps: Deps, raw: unknown): Changes {
  if (raw === undefined || raw === null) return {};
  if (!isObject(raw)) throw new DomainError('invalid_request', 'connection must be an object.');
  const out: Changes = {};
  if (raw.ean_code !== undefined) {
    const ean = typeof raw.ean_code === 'string' ? normaliseEan(raw.ean_code) : raw.ean_code;
    assertEanFormat(deps, ean);
    out.ean_code = ean;
  }
  const blank = ADDRESS_FIELDS.filter((f) => raw[f] !== undefined && addressField(raw[f]) === null);
  if (blank.length) {
    throw new DomainError('address_required', `${blank.map((f) => `connection.${f}`).join(', ')} cannot be empty.`);
  }
  for (const f of ADDRESS_FIELDS) if (raw[f] !== undefined) out[f] = addressField(raw[f])!;
  if (raw.house_number_addition !== undefined) {
    const a = raw.house_number_addition;
    if (a !== null && typeof a !== 'string') {
      throw new DomainError('invalid_request', 'connection.house_number_addition must be a string or null.');
    }
    out.house_number_addition = a === null || a.trim() === '' ? null : cutText(a.trim(), 20);
  }
  return out;
}

/**
 * Rule 3: a month of the connection is registered as ERE. With `lock` (inside the correction's transaction) the
 * months are read FOR SHARE, so a registration in flight is waited for and seen, and one that starts later waits
 * for the correction to commit. Lock order: the connection row first, then its months (as sessions:batch).
 */
export async function ereBooked(deps: Deps, connectionId: string, lock = false): Promise<boolean> {
  const q = deps.db.selectFrom('energy_months').select('status').where('connection_id', '=', connectionId);
  const rows = await (lock ? q.forShare() : q.where('status', '=', 'registered').limit(1)).execute();
  return rows.some((r) => r.status === 'registered');
}

type Next = Required<Omit<Changes, 'house_number_addition'>> & { house_number_addition: string | null };
type Plan = { changed: false } | { changed: true; next: Next; revoke: boolean };

/**
 * Rules 3, 4, 2 and the EAN-free part of rule 1, in the specification's order, on one reading of the row. Run
 * twice: on the row as first read (to consult the EAN register outside any transaction) and on the locked row,
 * whose verdict is the one that counts.
 */
async function plan(deps: Deps, current: ConnectionRow, changes: Changes, ack: unknown, lock: boolean): Promise<Plan> {
  assertActive(current);
  // rule 3: before the comparison with stored values
  if (await ereBooked(deps, current.id, lock)) {
    throw new DomainError('ere_booked', 'A delivered month of this connection is already registered as ERE; it can no longer be corrected.');
  }
  const next: Next = {
    ean_code: changes.ean_code ?? current.ean_code,
    street: changes.street ?? current.street,
    house_number: changes.house_number ?? current.house_number,
    postal_code: changes.postal_code ?? current.postal_code,
    city: changes.city ?? current.city,
    house_number_addition: changes.house_number_addition !== undefined ? changes.house_number_addition : current.house_number_addition,
  };
  const changed =
    next.ean_code !== current.ean_code ||
    next.street !== current.street ||
    next.house_number !== current.house_number ||
    normalisePostalCode(next.postal_code) !== normalisePostalCode(current.postal_code) ||
    next.city !== current.city ||
    (next.house_number_addition ?? null) !== (current.house_number_addition ?? null);
  // rule 4
  if (!changed) return { changed: false };
  // rule 2: a signed machtiging names the EAN and the address; a change ends it, only when acknowledged
  const revoke = current.mandate_status === 'active';
  if (revoke && ack !== true) {
    throw new DomainError(
      'mandate_signed',
      'The machtiging of this connection is signed; send acknowledge_mandate_lapses: true to change the EAN or address (the machtiging then lapses).',
    );
  }
  // rule 1: EAN and address re-validated together under the create rules (the unique index decides a race)
  if (next.ean_code !== current.ean_code) await assertEanFree(deps, next.ean_code, current.id);
  return { changed: true, next, revoke };
}

function response(c: ConnectionRow, changed: boolean, revoked: boolean): UpdateConnectionResponse {
  return {
    ok: true,
    changed,
    connection_id: c.id,
    account_id: c.account_id,
    ean_code: c.ean_code,
    ean_validation_status: c.ean_validation_status,
    registration_status: c.registration_status,
    mandate_status: c.mandate_status,
    mandate_revoked: revoked,
  };
}

export async function updateConnection(deps: Deps, partnerId: string, raw: unknown): Promise<UpdateConnectionResponse> {
  const body = isObject(raw) ? raw : {};
  assertTarget(body as TargetInput);
  const changes = parseChanges(deps, body.connection);
  const ack = body.acknowledge_mandate_lapses;
  if (ack !== undefined && ack !== null && typeof ack !== 'boolean') {
    throw new DomainError('invalid_request', 'acknowledge_mandate_lapses must be a boolean.');
  }
  const found = await findTargetConnection(deps, partnerId, body as TargetInput);
  // A first pass on the row as read: an error or "unchanged" there is a true answer as of that reading, and a
  // change is checked against the EAN register here, outside any transaction and row lock.
  const pre = await plan(deps, found, changes, ack, false);
  if (!pre.changed) return response(found, false, false);
  const preKey = JSON.stringify(pre.next);
  const preStatus = await validateEanAgainstRegister(deps, pre.next.ean_code, pre.next);

  // issue 10 item 7: the checks that count are made again on the row locked FOR UPDATE, and the write follows
  // in the same transaction: two concurrent corrections are applied one after the other, each on the other's
  // result, and an archive, a signature or an ERE registration that lands meanwhile is seen.
  const now = deps.clock();
  const out = await deps.db.transaction().execute(async (trx) => {
    const tdeps = { ...deps, db: trx };
    const row = await trx.selectFrom('connections').selectAll().where('id', '=', found.id).forUpdate().executeTakeFirstOrThrow();
    const current: ConnectionRow = { ...row, partner_id: found.partner_id };
    const p = await plan(tdeps, current, changes, ack, true);
    if (!p.changed) return { row: current, changed: false, revoke: false };
    const { next, revoke } = p;
    // the row moved between the first reading and the lock (a concurrent correction): the register is asked again
    const eanStatus = JSON.stringify(next) === preKey ? preStatus : await validateEanAgainstRegister(deps, next.ean_code, next);
    if (revoke) {
      await trx
        .updateTable('mandates')
        .set({ status: 'revoked', revoked_at: now })
        .where('connection_id', '=', current.id)
        .where('status', '=', 'active')
        .execute();
      // D28: the lapsed machtiging's links are void, signed or open: none can be signed for the corrected EAN or
      // address, and the next POST /v1/mandate-links issues a new link (written here, beside the revocation, so
      // the connections area does not import the mandates area, which imports it)
      await trx.updateTable('mandate_links').set({ voided_at: now }).where('connection_id', '=', current.id).where('voided_at', 'is', null).execute();
    }
    try {
      const updated = await trx
        .updateTable('connections')
        .set({
          ...next,
          ean_validation_status: eanStatus,
          ean_checked_at: now,
          updated_at: now,
          ...(revoke ? { mandate_status: 'pending' as const, registration_status: 'concept' as const, mandate_valid_from: null } : {}),
        })
        .where('id', '=', current.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      return { row: { ...updated, partner_id: current.partner_id }, changed: true, revoke };
    } catch (err) {
      if (isEanUniqueViolation(err)) throw eanInUse(next.ean_code);
      throw err;
    }
  });
  return response(out.row, out.changed, out.revoke);
}
