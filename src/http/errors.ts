// The one table from a DomainError code to an HTTP status. It reads like spec §7, C1 and C6.1.
// A code not listed here is a 400 when it came from a DomainError (a client mistake we named).
import type { FastifyReply } from 'fastify';
import { DomainError } from '../domain/errors.ts';

export const STATUS_BY_CODE: Record<string, number> = {
  // generic
  invalid_request: 400,
  invalid_json: 400,
  not_found: 404,
  payload_too_large: 413,
  unsupported_media_type: 415,
  // what the server answers before any route (D84, D89: src/http/app.ts, src/http/client-errors.ts)
  request_timeout: 408,
  uri_too_long: 414,
  expectation_failed: 417,
  headers_too_large: 431,
  internal_error: 500,
  // D155: the database is unavailable or too slow right now (db-unavailable.ts); Retry-After says when to retry
  service_unavailable: 503,
  // C1.1 token endpoint
  unsupported_grant_type: 400,
  invalid_scope: 400,
  invalid_client: 401,
  // spec §7: POST /v1/accounts
  invalid_type: 400,
  invalid_payout_handler: 400,
  invalid_iban: 400,
  person_required: 400,
  invalid_ean: 400,
  address_required: 400,
  ean_in_use: 409,
  ean_address_mismatch: 422,
  ean_not_dutch: 422,
  account_create_failed: 500,
  // spec §7: POST /v1/connections:update
  target_required: 400,
  connection_not_found: 404,
  ambiguous_connection: 409,
  connection_not_active: 409,
  mandate_signed: 409,
  ere_booked: 409,
  // C2.2 mandate links
  mandate_already_active: 409,
  // spec §7: POST /v1/chargers
  invalid_account_id: 400,
  invalid_catalog_charger_id: 400,
  vendor_and_model_required: 400,
  account_not_found: 404,
  catalog_not_found: 404,
  no_connection: 409,
  serial_required: 409,
  catalog_not_mid: 422,
  catalog_unresolved: 422,
  charger_limit: 422,
  // C4.9, C6.6
  ocpp_identity_taken: 409,
  charger_not_found: 404,
  charger_offline: 409,
  charger_timeout: 504,
  // C6.6: the charger answered the operator's command with a CALLERROR
  charger_call_error: 502,
  // C6.1 and spec §7 bodies whose status the spec left open
  'Missing or invalid API token': 401,
  consent_required: 400,
  'customers must be a non-empty array of { name, email }': 400,
  'No partner is linked to this API key': 403,
  'Failed to create drafts': 500,
  'Authentication is temporarily unavailable, try again shortly': 503,
  'Insufficient scope': 403,
  partner_api_key_scope: 403,
  'Too many requests': 429,
  // C1.6 admin API (platform)
  partner_not_found: 404,
  cpo_client_not_found: 404,
  claim_confirm_required: 409,
  suppression_not_found: 404,
  suppression_unsubscribed: 409,
  // D170: POST /admin/outbox/:id/requeue
  outbox_message_not_found: 404,
  outbox_message_not_failed: 409,
  user_not_found: 404,
  job_not_found: 404,
  job_running: 409,
  // D249: a run by hand that failed: the job's own reason (as GET /admin/jobs keeps it), not an anonymous 500
  job_failed: 500,
  // energy and ERE (issue 6): month review, sandbox register-ere, ERE ledger (admin API)
  invalid_month: 400,
  energy_month_not_found: 404,
  invalid_transition: 409,
  account_not_eligible: 409,
  // C5.5: a month held for the connection's capacity is registered only after the operator decided on the hold
  energy_held: 409,
  month_not_covered: 409,
  sale_not_found: 404,
  allocation_not_found: 404,
  sale_exceeded: 409,
  insufficient_registered_ere: 409,
  nothing_payable: 409,
  // OCPP quarantine (admin API): a set-aside part, or an action this gateway does not handle, cannot be replayed
  quarantine_not_replayable: 409,
  // C5.5 held energy (admin API): a session's review
  session_not_found: 404,
  session_not_held: 409,
  // C7.1 GET /chargers/stream: the token already holds STREAM_MAX_PER_TOKEN open streams
  too_many_streams: 429,
  // issue 14 item 3: an owner's start and stop (charging/remote-control.ts)
  session_not_active: 409,
  id_token_refused: 409,
  // C7.2 the dashboard: a used or expired sign-in link, a token not the user's, the cap of open tokens
  sign_in_link_invalid: 410,
  token_not_found: 404,
  too_many_tokens: 409,
};

export function statusForCode(code: string): number {
  return STATUS_BY_CODE[code] ?? 400;
}

export interface ErrorBody {
  error: string;
  detail?: string;
  [k: string]: unknown;
}

export function errorBody(err: DomainError): ErrorBody {
  return { error: err.code, ...(err.detail !== undefined ? { detail: err.detail } : {}), ...(err.extra ?? {}) };
}

export function sendDomainError(reply: FastifyReply, err: DomainError): FastifyReply {
  return reply.code(statusForCode(err.code)).send(errorBody(err));
}
