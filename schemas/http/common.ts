// Pieces every schema of the HTTP contract shares: the one error body, the request-body field rules whose
// failure has its own error code, and fields whose checks stay with the domain but whose type is documented.
import { z } from 'zod';

/** Every error answer of the API: `{error, detail?}`; some add fields (required_scope, retry_after_seconds, …). */
export const ErrorBody = z
  .object({
    error: z.string().describe('the error code (or, for the auth layer, the message) a client can switch on'),
    detail: z.string().optional().describe('a sentence for people; never parse it'),
  })
  .loose();

/** A UUID as the API writes it (8-4-4-4-12 hex digits, any version). */
export const UUID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
export const Uuid = z.string().regex(UUID_PATTERN).meta({ format: 'uuid' });

/**
 * A field whose rules stay with the domain (its failure is a per-item result, a 404, or depends on other fields),
 * accepted as any JSON value at the edge and documented with its real type. `typed` is never used to parse.
 */
export function checkedByDomain(typed: z.ZodType): z.ZodOptional<z.ZodUnknown> {
  return z.unknown().optional().meta(documented(typed));
}

/** The same for a field that must be present (a missing one is a 400 invalid_request at the edge). */
export function requiredCheckedByDomain(typed: z.ZodType): z.ZodUnknown {
  return z.unknown().meta(documented(typed));
}

function documented(typed: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(typed, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

/** A page's 400: its link's path does not decode, answered before any route runs (JSON, not the page). */
export const BadLinkBody = ErrorBody.describe('error: invalid_request (the link is not valid percent-encoded UTF-8)');

/** A sample EAN that passes every check of the API: 18 digits, Dutch (871…), with a valid GS1 check digit. */
export const EXAMPLE_EAN = '871685900012345674';
export const EXAMPLE_UUID = '3f6c2a4e-8b1d-4c7e-9a2f-5d0e1b7c9a31';

/** The largest value of a PostgreSQL integer column: an integer input stored in one is bounded by it (a larger one
 * failed the statement as a 500). */
export const INT4_MAX = 2_147_483_647;

/**
 * D131, D145: an admin list a page at a time: the query's `limit` (1–1000, default 100) and `offset`, and the
 * answer's `limit`, `offset` and `count` (every row matching the filters).
 */
export const AdminPageQuery = {
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).default(0),
};
export const AdminPageFields = {
  limit: z.number().int(),
  offset: z.number().int(),
  count: z.number().int().describe('every row matching the filters; page on with offset until offset + limit ≥ count'),
};
