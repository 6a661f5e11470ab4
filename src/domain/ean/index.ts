// The EAN rules of spec §4.1 (create rules 4–6, update rule 1) and C2.7, in one place for the CPO create,
// the connection correction, the partner claim and the weekly re-check.
import type { Deps } from '../../deps.ts';
import { DomainError } from '../errors.ts';
import { hasValidCheckDigit, isEighteenDigits, looksDutch } from './ean.ts';
import { EanRegisterUnavailable, type RegisterAddress } from './register.ts';

export * from './ean.ts';
export * from './register.ts';

const isProduction = (deps: Deps) => deps.config.APP_ENV === 'production';

/** Body check (400 invalid_ean): 18 digits; on production also the GS1 check digit (C2.7). */
export function assertEanFormat(deps: Deps, ean: unknown): asserts ean is string {
  if (typeof ean !== 'string' || !isEighteenDigits(ean)) {
    throw new DomainError('invalid_ean', 'connection.ean_code must be 18 digits.');
  }
  if (isProduction(deps) && !hasValidCheckDigit(ean)) {
    throw new DomainError('invalid_ean', `EAN ${ean} has a wrong check digit (GS1 mod 10).`);
  }
}

/** Rule 4: an EAN belongs to one active connection (read check; the unique index decides under races). */
export async function assertEanFree(deps: Deps, ean: string, exceptConnectionId?: string): Promise<void> {
  let q = deps.db.selectFrom('connections').select('id').where('ean_code', '=', ean).where('status', '=', 'active');
  if (exceptConnectionId) q = q.where('id', '<>', exceptConnectionId);
  if (await q.executeTakeFirst()) throw eanInUse(ean);
}

export const eanInUse = (ean: string) => new DomainError('ean_in_use', `EAN ${ean} is already registered.`);

/** True when err is the unique violation of connections_active_ean. */
export function isEanUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; constraint?: string; message?: string } | null;
  return !!e && e.code === '23505' && (e.constraint === 'connections_active_ean' || /connections_active_ean/.test(e.message ?? ''));
}

/**
 * Rules 5 and 6 (C2.7): the validation status a new or corrected connection gets, or a 422.
 * Sandbox: the register check does not run and any 18-digit EAN is accepted as matched.
 */
export async function validateEanAgainstRegister(
  deps: Deps,
  ean: string,
  address: RegisterAddress,
): Promise<'matched' | 'unverified'> {
  if (!isProduction(deps)) return 'matched';
  if (!looksDutch(ean)) {
    throw new DomainError('ean_not_dutch', `EAN ${ean} does not look Dutch (a Dutch connection EAN starts with 871).`);
  }
  try {
    const verdict = await deps.eanRegister.check(ean, address);
    if (verdict.outcome === 'matched') return 'matched';
    if (verdict.outcome === 'mismatched') {
      throw new DomainError('ean_address_mismatch', verdict.detail ?? `The EAN register does not list EAN ${ean} at this address.`);
    }
    return 'unverified'; // new build: queued for review; the weekly re-check settles it
  } catch (err) {
    if (err instanceof EanRegisterUnavailable) {
      // An outage must not block onboarding: the connection waits as unverified for the re-check.
      deps.logger.warn({ err: err.message }, 'EAN register unavailable; connection left unverified');
      return 'unverified';
    }
    throw err;
  }
}

export interface RecheckResult {
  checked: number;
  matched: number;
  mismatched: number;
  unverified: number;
  failed: number;
}

/**
 * The periodic re-check (spec §3, C2.7): every active `unverified` connection is looked up again;
 * confirmed → matched, another EAN or address listed → mismatched, still unknown → stays unverified.
 * partnerId limits it to one partner's connections (the sandbox helper, C2.6).
 * In the sandbox the register check does not run, so an unknown EAN counts as matched there.
 */
export async function recheckUnverifiedEans(deps: Deps, opts: { partnerId?: string } = {}): Promise<RecheckResult> {
  let q = deps.db
    .selectFrom('connections as c')
    .innerJoin('accounts as a', 'a.id', 'c.account_id')
    .select(['c.id', 'c.ean_code', 'c.postal_code', 'c.house_number', 'c.house_number_addition'])
    .where('c.status', '=', 'active')
    .where('c.ean_validation_status', '=', 'unverified')
    .orderBy('c.created_at');
  if (opts.partnerId) q = q.where('a.partner_id', '=', opts.partnerId);
  const rows = await q.execute();
  const register = deps.eanRegister;
  const out: RecheckResult = { checked: rows.length, matched: 0, mismatched: 0, unverified: 0, failed: 0 };
  for (const c of rows) {
    let next: 'matched' | 'mismatched' | 'unverified';
    try {
      const v = await register.check(c.ean_code, c);
      next = v.outcome === 'matched' ? 'matched' : v.outcome === 'mismatched' ? 'mismatched' : isProduction(deps) ? 'unverified' : 'matched';
    } catch (err) {
      if (!(err instanceof EanRegisterUnavailable)) throw err;
      out.failed++;
      continue;
    }
    out[next]++;
    // only a row still unverified moves (a correction in between wins)
    await deps.db
      .updateTable('connections')
      .set({ ean_validation_status: next, ean_checked_at: deps.clock(), updated_at: deps.clock() })
      .where('id', '=', c.id)
      .where('ean_validation_status', '=', 'unverified')
      .where('ean_code', '=', c.ean_code)
      .execute();
  }
  return out;
}
