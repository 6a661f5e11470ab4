// A request that fails its schema answers with the spec's error code for the field that failed (spec §4.1 and
// §7: POST /v1/accounts invalid_type … address_required; POST /v1/chargers invalid_account_id …), and otherwise
// with invalid_request. The body schemas declare their fields in the order the spec lists the errors, so the
// first failing field decides. The status comes from the one code → status table (errors.ts).
import { statusForCode } from './errors.ts';

/** Route ("METHOD url" as registered) → field path (dot-separated, a prefix matches deeper paths) → code. */
export const FIELD_ERROR_CODES: Record<string, Record<string, string>> = {
  'POST /v1/accounts': {
    '': 'person_required',
    type: 'invalid_type',
    payout_handler: 'invalid_payout_handler',
    iban: 'invalid_iban',
    person: 'person_required',
    'person.full_name': 'person_required',
    'person.email': 'invalid_request',
    'person.phone': 'invalid_request',
    // a missing or malformed connection object: its EAN is the first thing missing
    connection: 'invalid_ean',
    'connection.ean_code': 'invalid_ean',
    'connection.street': 'address_required',
    'connection.house_number': 'address_required',
    'connection.postal_code': 'address_required',
    'connection.city': 'address_required',
    'connection.house_number_addition': 'invalid_request',
  },
  'POST /v1/chargers': {
    '': 'invalid_account_id',
    account_id: 'invalid_account_id',
    catalog_charger_id: 'invalid_catalog_charger_id',
    ocpp_vendor: 'vendor_and_model_required',
    ocpp_model: 'vendor_and_model_required',
  },
};

export interface ValidationIssue {
  /** "/connection/ean_code" as fastify-type-provider-zod reports it */
  instancePath: string;
  message?: string;
}

/**
 * The error answer for a request that failed its schema: the first issue's field code when the route names
 * one, else invalid_request with every issue in the detail.
 */
export function validationError(
  routeKey: string,
  context: string,
  issues: ValidationIssue[],
): { status: number; body: { error: string; detail: string } } {
  const codes = context === 'body' ? FIELD_ERROR_CODES[routeKey] : undefined;
  const first = issues[0];
  if (codes && first) {
    const path = first.instancePath.split('/').filter(Boolean);
    // '' is the body itself (absent, or not an object); it never stands in for a deeper field
    for (let n = path.length; n >= (path.length === 0 ? 0 : 1); n--) {
      const code = codes[path.slice(0, n).join('.')];
      if (code) return { status: statusForCode(code), body: { error: code, detail: first.message ?? `${path.join('.')} is invalid.` } };
    }
  }
  // the field's path as `body.connection.ean_code`; the body itself (instancePath '' or '/') as `body`
  const detail = issues
    .map((v) => {
      const path = v.instancePath.split('/').filter(Boolean).join('.');
      return `${context}${path ? `.${path}` : ''}: ${v.message}`;
    })
    .join('; ');
  return { status: 400, body: { error: 'invalid_request', detail } };
}
