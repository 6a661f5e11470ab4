// The partner area's public face: the two upload endpoints (spec §4.2), referral codes, the claim (C3.4).
import type { Deps } from '../../deps.ts';
import { DomainError } from '../errors.ts';
import { parseDraftCsv } from './csv.ts';
import { canonicalRow, type RawRow } from './fields.ts';
import { createDrafts, partnerOf, type UploadResult } from './upload.ts';

export { SKIP_REASONS, type SkipReason } from './rows.ts';
export { MAX_ROWS_PER_REQUEST, type UploadResult } from './upload.ts';
export { addReferralCodes } from './referral-codes.ts';
export { runDraftEanLookup } from './pending-lookups.ts';

const CONSENT_MESSAGE =
  'Set consent: true to confirm that every customer in this request agreed to be pre-registered and to receive the claim link.';

type Body = Record<string, unknown>;
const asBody = (b: unknown): Body => (b && typeof b === 'object' && !Array.isArray(b) ? (b as Body) : {});

function requireConsent(body: Body): void {
  if (body['consent'] !== true) throw new DomainError('consent_required', undefined, { message: CONSENT_MESSAGE });
}

function sendInviteOf(body: Body): boolean {
  const v = body['send_invite'];
  if (v === undefined || v === null) return true;
  if (typeof v !== 'boolean') throw new DomainError('invalid_request', 'send_invite must be a boolean');
  return v;
}

/** POST /partner/customers */
export async function uploadCustomers(deps: Deps, partnerId: string, raw: unknown): Promise<UploadResult> {
  await partnerOf(deps, partnerId);
  const body = asBody(raw);
  requireConsent(body);
  const customers = body['customers'];
  if (!Array.isArray(customers) || customers.length === 0 || customers.some((c) => !c || typeof c !== 'object' || Array.isArray(c))) {
    throw new DomainError('customers must be a non-empty array of { name, email }');
  }
  const sendInvite = sendInviteOf(body);
  const rows = customers.map((c) => canonicalRow(c, { allowCharger: true }));
  return createDrafts(deps, { partnerId, endpoint: 'customers', source: 'api', rows, sendInvite });
}

/** POST /partner/drafts/import: `rows` wins over `csv`; only source "api" looks EANs up in the request. */
export async function importDrafts(deps: Deps, partnerId: string, raw: unknown): Promise<UploadResult> {
  await partnerOf(deps, partnerId);
  const body = asBody(raw);
  requireConsent(body);
  const sendInvite = sendInviteOf(body);
  const source = body['source'] === 'api' ? 'api' : 'csv';
  let rows: RawRow[] = [];
  let rowNumbers: number[] | undefined;
  if (body['rows'] !== undefined && body['rows'] !== null) {
    const r = body['rows'];
    if (!Array.isArray(r)) throw new DomainError('invalid_request', 'rows must be an array of draft rows');
    rows = r.map((x) => canonicalRow(x, { allowCharger: true }));
  } else if (body['csv'] !== undefined && body['csv'] !== null) {
    if (typeof body['csv'] !== 'string') throw new DomainError('invalid_request', 'csv must be a string');
    const parsed = parseDraftCsv(body['csv']);
    rows = parsed.map((p) => p.row);
    rowNumbers = parsed.map((p) => p.number);
  }
  return createDrafts(deps, { partnerId, endpoint: 'import', source, rows, rowNumbers, sendInvite });
}
