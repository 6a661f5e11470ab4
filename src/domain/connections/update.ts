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
    out.house_number_addition = a === null || a.trim() === '' ? null : a.trim().slice(0, 20);
  }
  return out;
}

export async function ereBooked(deps: Deps, connectionId: string): Promise<boolean> {
  const row = await deps.db
    .selectFrom('energy_months')
    .select('id')
    .where('connection_id', '=', connectionId)
    .where('status', '=', 'registered')
    .executeTakeFirst();
  return !!row;
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
  const current = await findTargetConnection(deps, partnerId, body as TargetInput);
  assertActive(current);
  // rule 3: before the comparison with stored values
  if (await ereBooked(deps, current.id)) {
    throw new DomainError('ere_booked', 'A delivered month of this connection is already registered as ERE; it can no longer be corrected.');
  }
  const next = {
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
  if (!changed) return response(current, false, false);
  // rule 2: a signed machtiging names the EAN and the address; a change ends it, only when acknowledged
  const signed = current.mandate_status === 'active';
  if (signed && ack !== true) {
    throw new DomainError(
      'mandate_signed',
      'The machtiging of this connection is signed; send acknowledge_mandate_lapses: true to change the EAN or address (the machtiging then lapses).',
    );
  }
  // rule 1: EAN and address re-validated together under the create rules
  if (next.ean_code !== current.ean_code) await assertEanFree(deps, next.ean_code, current.id);
  const eanStatus = await validateEanAgainstRegister(deps, next.ean_code, next);

  const now = deps.clock();
  const updated = await deps.db.transaction().execute(async (trx) => {
    // the row as it is now; a concurrent signature or correction is not overwritten blindly
    const locked = await trx.selectFrom('connections').select(['mandate_status', 'status']).where('id', '=', current.id).forUpdate().executeTakeFirstOrThrow();
    if (locked.status !== 'active') {
      throw new DomainError('connection_not_active', 'The connection is archived and can no longer be changed.');
    }
    const revoke = locked.mandate_status === 'active';
    if (revoke && ack !== true) {
      throw new DomainError('mandate_signed', 'The machtiging of this connection was signed meanwhile; send acknowledge_mandate_lapses: true.');
    }
    if (revoke) {
      await trx
        .updateTable('mandates')
        .set({ status: 'revoked', revoked_at: now })
        .where('connection_id', '=', current.id)
        .where('status', '=', 'active')
        .execute();
    }
    try {
      const row = await trx
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
      return { row: { ...row, partner_id: current.partner_id }, revoke };
    } catch (err) {
      if (isEanUniqueViolation(err)) throw eanInUse(next.ean_code);
      throw err;
    }
  });
  return response(updated.row, true, updated.revoke);
}
