// Referral codes (issue 7 item 4): the operator lists known codes; a row's code is reported as matched
// when it is listed (case-insensitive).
import type { Deps } from '../../deps.ts';
import { DomainError } from '../errors.ts';
import { cutText } from '../../lib/nul.ts';

export async function addReferralCodes(deps: Deps, raw: unknown): Promise<{ added: number; codes: string[] }> {
  const body = (raw && typeof raw === 'object' ? raw : {}) as { codes?: unknown; code?: unknown; description?: unknown };
  const list = Array.isArray(body.codes) ? body.codes : body.code !== undefined ? [body.code] : null;
  if (!list || list.length === 0 || list.length > 10_000 || list.some((c) => typeof c !== 'string' || !/^[A-Za-z0-9_-]{2,64}$/.test(c.trim()))) {
    throw new DomainError('invalid_request', 'codes must be a non-empty array of codes (2–64 letters, digits, - or _)');
  }
  const description = typeof body.description === 'string' ? cutText(body.description, 200) : null;
  const codes = [...new Map((list as string[]).map((c) => [c.trim().toLowerCase(), c.trim()])).values()];
  const rows = await deps.db
    .insertInto('referral_codes')
    .values(codes.map((code) => ({ code, code_lower: code.toLowerCase(), description })))
    .onConflict((oc) => oc.doNothing())
    .returning('code')
    .execute();
  return { added: rows.length, codes };
}
