// A request that fails its schema answers with the spec's error code for the field that failed (spec §4.1 and
// §7: POST /v1/accounts invalid_type … address_required; POST /v1/chargers invalid_account_id …), and otherwise
// with invalid_request. The body schemas declare their fields in the order the spec lists the errors, so the
// first failing field decides. The status comes from the one code → status table (errors.ts). Its detail is a
// sentence naming the field (D228, issueSentence), never the validator's own wording.
import { statusForCode } from './errors.ts';
import { DomainError } from '../domain/errors.ts';
import { UUID_PATTERN } from '../../schemas/http/common.ts';

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
  /** zod's issue code (invalid_type, invalid_format, too_small, …) */
  keyword?: string;
  /** the rest of zod's issue: expected, pattern, minimum, values, errors, … */
  params?: Record<string, unknown>;
}

const UUID_SOURCES = new Set([`/${UUID_PATTERN.source}/`, `/${UUID_PATTERN.source}/i`]);
/** a pattern that asks for one non-blank character: a blank string is as good as a missing one */
const NON_BLANK_SOURCES = new Set(['/\\S/', '/\\S/u']);

const TYPE_NAMES: Record<string, string> = {
  object: 'an object',
  array: 'an array',
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
};
const typeName = (expected: unknown) => TYPE_NAMES[String(expected)] ?? `of type ${String(expected)}`;
const listed = (values: unknown[]) => values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ');

/** zod's own message says what it received ("…, received undefined"): the one place a missing value shows. */
const wasMissing = (message: string | undefined) => /received (undefined|null)$/.test(message ?? '');

/** What the field failed, as the end of a sentence that starts with the field's name ("is required."). */
function failure(keyword: string | undefined, p: Record<string, unknown>, message: string | undefined): string {
  switch (keyword) {
    case 'invalid_type':
      return wasMissing(message) ? 'is required.' : `must be ${typeName(p.expected)}.`;
    case 'invalid_value': {
      const values = Array.isArray(p.values) ? p.values : [];
      return values.length === 1 ? `must be ${listed(values)}.` : `must be one of ${listed(values)}.`;
    }
    case 'invalid_format': {
      if (p.format === 'regex') {
        const pattern = String(p.pattern);
        if (NON_BLANK_SOURCES.has(pattern)) return 'is required.';
        if (UUID_SOURCES.has(pattern)) return 'must be a uuid.';
        return 'does not have the expected format.';
      }
      return p.format === 'uuid' || p.format === 'guid' ? 'must be a uuid.' : `must be a valid ${String(p.format)}.`;
    }
    case 'too_small':
    case 'too_big': {
      const small = keyword === 'too_small';
      const bound = String(small ? p.minimum : p.maximum);
      if (p.origin === 'string') {
        if (small && bound === '1') return 'is required.';
        return `must be ${small ? 'at least' : 'at most'} ${bound} characters.`;
      }
      if (p.origin === 'array' || p.origin === 'set') return `must have ${small ? 'at least' : 'at most'} ${bound} items.`;
      if (p.inclusive === false) return `must be ${small ? 'greater' : 'less'} than ${bound}.`;
      return `must be ${small ? 'at least' : 'at most'} ${bound}.`;
    }
    case 'not_multiple_of':
      return `must be a multiple of ${String(p.divisor)}.`;
    case 'unrecognized_keys':
      return `has unknown fields: ${listed(Array.isArray(p.keys) ? p.keys : [])}.`;
    case 'invalid_union': {
      // the union's branches each wanted a type: name them ("a string or an integer")
      const branches = Array.isArray(p.errors) ? (p.errors as Array<Array<{ code?: string; expected?: unknown; path?: unknown[] }>>) : [];
      const types = branches.map((b) => (b.length === 1 && b[0]!.code === 'invalid_type' && (b[0]!.path ?? []).length === 0 ? typeName(b[0]!.expected) : null));
      if (types.length > 0 && types.every((t) => t !== null)) return `must be ${[...new Set(types)].join(' or ')}.`;
      return 'is not valid.';
    }
    default:
      return 'is not valid.';
  }
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The detail of one failed field: a sentence for people that names the field by its path ("person is required.",
 * "connection.city is required.", "catalog_charger_id must be a uuid."), never the validator's own wording. A
 * message the schema wrote itself names its field and is kept as it is ("iban must be 15 to 34 letters …"); any
 * other (zod's "Invalid input: expected object, received undefined", "Invalid string: must match pattern /\S/") is
 * replaced by a sentence made from the issue's code and parameters.
 */
export function issueSentence(issue: ValidationIssue): string {
  const path = issue.instancePath.split('/').filter(Boolean).join('.');
  if (path === '') {
    return issue.keyword === 'invalid_type' ? 'The request body must be a JSON object.' : 'The request body is not valid.';
  }
  if (issue.message && new RegExp(`(^|[^\\w.])${escapeRe(path)}(?!\\w|\\.\\w)`).test(issue.message)) return issue.message;
  return `${path} ${failure(issue.keyword, issue.params ?? {}, issue.message)}`;
}

/**
 * The error answer for a request that failed its schema. On a route with field codes: the first issue's field code
 * (invalid_request for a field without one) and that field's sentence. Elsewhere invalid_request with every issue in
 * the detail, each prefixed by where it was (`body.grant_type: …`, `querystring.limit: …`).
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
    let code = 'invalid_request';
    // '' is the body itself (absent, or not an object); it never stands in for a deeper field
    for (let n = path.length; n >= (path.length === 0 ? 0 : 1); n--) {
      const named = codes[path.slice(0, n).join('.')];
      if (named) {
        code = named;
        break;
      }
    }
    return { status: statusForCode(code), body: { error: code, detail: issueSentence(first) } };
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

/**
 * D231 (A4): a text filter of a list (`cpo_external_ref`) that is present but empty or blank is refused as 400
 * invalid_request naming the parameter, rather than matching nothing (count 0) or being ignored (every row): a
 * client generator's empty default or an unset variable then shows as a mistake, not as "no such customer".
 */
export function filterText(name: string, v: string | undefined): string | undefined {
  if (v !== undefined && v.trim() === '') {
    throw new DomainError('invalid_request', `querystring.${name}: must not be empty; leave the parameter out to list every account.`);
  }
  return v;
}
