// Charger passwords (issue 10 item 8, C0.6: only hashes are stored, a password is never logged nor returned
// after it was created). An operator sets one (a fleet imported with its passwords), the gateway rotates one over
// OCPP, and the upgrade checks one (Security Profiles 1 and 2).
import crypto from 'node:crypto';
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { hashSecret, timingSafeEqualStr } from '../../lib/secrets.ts';
import { DomainError } from '../errors.ts';
import { requireCharger } from './ocpp-charger.ts';

/**
 * OCPP 2.0.1 BasicAuthPassword is a passwordString of 16–40 characters. Operators importing a fleet bring
 * passwords of their own, so any printable ASCII but the space is accepted (Basic auth carries it as is).
 */
export const PASSWORD_PATTERN = /^[\x21-\x7e]{16,40}$/;
export const PASSWORD_RULE = 'password: 16 to 40 printable ASCII characters, no spaces';

/** Characters of OCPP's identifierString/passwordString set, which every charger accepts. */
const GENERATED_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789*-_=:+|@.';
/**
 * 20 characters (≈123 bits): within 2.0.1's 16–40 characters and within the 16–20 bytes the OCPP 1.6
 * security whitepaper gives for AuthorizationKey, so one generated password suits both protocols.
 */
export const GENERATED_LENGTH = 20;

/** A generated password starts with a letter or digit: one starting with `-` reads as an option on a command line. */
const FIRST_CHARS = GENERATED_CHARS.slice(0, 62);

/** One character of `chars`, every one equally likely (rejection sampling). */
function pick(chars: string): string {
  const limit = 256 - (256 % chars.length);
  for (;;) for (const b of crypto.randomBytes(8)) if (b < limit) return chars[b % chars.length]!;
}

/** Every password the gateway makes for a charger (registration, rotation, the sandbox's demo charger). */
export function generateChargerPassword(): string {
  let out = pick(FIRST_CHARS);
  while (out.length < GENERATED_LENGTH) out += pick(GENERATED_CHARS);
  return out;
}

export function assertValidPassword(password: string): void {
  if (!PASSWORD_PATTERN.test(password)) throw new DomainError('invalid_request', PASSWORD_RULE);
}

async function requireOcppCharger(deps: Deps, chargerId: string): Promise<{ id: string; ocpp_identity: string }> {
  await requireCharger(deps, chargerId);
  const row = await deps.db
    .selectFrom('chargers')
    .select(['id', 'ocpp_identity'])
    .where('id', '=', chargerId)
    .where('status', '=', 'active')
    .executeTakeFirst();
  if (!row?.ocpp_identity) throw new DomainError('charger_not_found', `Charger ${chargerId} is not an OCPP charger.`);
  return { id: row.id, ocpp_identity: row.ocpp_identity };
}

export interface PasswordState {
  charger_id: string;
  identity: string;
  password_changed_at: Date;
}

/** Operator sets the password: it replaces the current one at once, and any rotation still pending is dropped. */
export async function setChargerPassword(deps: Deps, chargerId: string, password: string): Promise<PasswordState> {
  assertValidPassword(password);
  const ch = await requireOcppCharger(deps, chargerId);
  const row = await deps.db
    .updateTable('chargers')
    .set({ password_hash: hashSecret(password), pending_password_hash: null, password_changed_at: sql`now()`, updated_at: sql`now()` })
    .where('id', '=', ch.id)
    .returning('password_changed_at')
    .executeTakeFirstOrThrow();
  return { charger_id: ch.id, identity: ch.ocpp_identity, password_changed_at: row.password_changed_at! };
}

export type PasswordMatch = 'current' | 'pending' | null;

/**
 * Checks a password sent at the upgrade. The current one matches; the pending one (a rotation the charger
 * accepted) matches too and becomes the only one from now on, so the old password stops working.
 */
export async function checkChargerPassword(
  deps: Deps,
  row: { id: string; password_hash: string | null; pending_password_hash: string | null },
  password: string,
): Promise<PasswordMatch> {
  const hash = hashSecret(password);
  if (row.password_hash && timingSafeEqualStr(hash, row.password_hash)) return 'current';
  if (row.pending_password_hash && timingSafeEqualStr(hash, row.pending_password_hash)) {
    // compare-and-set: a later operator change (PUT …/password) is not overwritten by a stale pending hash
    await deps.db
      .updateTable('chargers')
      .set({ password_hash: hash, pending_password_hash: null, password_changed_at: sql`now()`, updated_at: sql`now()` })
      .where('id', '=', row.id)
      .where('pending_password_hash', '=', hash)
      .execute();
    return 'pending';
  }
  return null;
}
