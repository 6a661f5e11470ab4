// Request examples of the operations whose body schema carries none itself (the CPO write bodies carry theirs in
// schemas/http). Each is a body the API accepts (test/http/openapi.test.ts sends every one of them). Below them, the
// error examples: what the service sends for each error code of each operation (D227).
import { z } from 'zod';
import { EXAMPLE_EAN } from '../../schemas/http/common.ts';
import { MAX_ACTIVE_CHARGERS } from '../domain/chargers/charger-limit.ts';
import { PREFIX } from '../domain/credentials/scopes.ts';
import { INVALID_TOKEN, wrongHostDetail } from './auth.ts';
import { DB_RETRY_AFTER_SECONDS } from './db-unavailable.ts';
import { validationError } from './validation-codes.ts';

export const REQUEST_EXAMPLES: Record<string, unknown> = {
  createToken: { grant_type: 'client_credentials', client_id: 'cpo_2f9d4c1a7b', client_secret: 'cs_your_client_secret', scope: 'cpo:accounts:write cpo:accounts:read' },
  uploadPartnerCustomers: {
    consent: true,
    send_invite: false,
    customers: [
      { name: 'Anna de Vries', email: 'anna.devries@gmail.com', external_ref: 'P-20117', postal_code: '1015 CJ', house_number: '12', ean: EXAMPLE_EAN },
      { type: 'zakelijk', name: 'Bakkerij Jansen', email: 'info@bakkerij-jansen.nl', company_name: 'Bakkerij Jansen B.V.', kvk: '12345678' },
    ],
  },
  importPartnerDrafts: {
    consent: true,
    source: 'csv',
    send_invite: false,
    csv: 'naam;emailadres;postcode;huisnummer\nPieter Bakker;pieter.bakker@gmail.com;3511 LX;8',
  },
  registerMyCharger: { nickname: 'Oprit', connection_type: 'ocpp', ocpp_identity: 'ALFEN-0042' },
  sandboxSignMandate: { full_name: 'Anna de Vries' },
  sandboxRegisterEre: { month: '2026-10' },
  sandboxRunEanRecheck: {},
};

// ---- invalid_request ----

/** Values a client sends in the wrong place: a number for a text, a text for a number, a list for either. */
const WRONG_VALUES: unknown[] = [5, 'x', [[]]];
const WRONG_QUERY_VALUES = ['1000000', 'x'];

function keysOf(schema: z.ZodType): string[] {
  let s: z.ZodType = schema;
  for (let inner = (s._zod.def as { innerType?: z.ZodType }).innerType; inner; inner = (s._zod.def as { innerType?: z.ZodType }).innerType) s = inner;
  return s instanceof z.ZodObject ? Object.keys(s.shape) : [];
}

/**
 * The detail of the 400 invalid_request a route's own schemas give, worked out as the server answers one (its
 * validator, then validation-codes.ts): a body without its fields or with a field of the wrong type, else a query
 * parameter out of range or of the wrong type, else a path parameter. undefined when the schemas leave every check to
 * the domain. `example` is a body the route accepts: one field of it is spoilt at a time.
 */
export function invalidRequestDetail(
  routeKey: string,
  schemas: { body?: unknown; querystring?: unknown; params?: unknown; consumes?: unknown },
  example?: unknown,
): string | undefined {
  const first = (context: string, schema: unknown, inputs: unknown[]): string | undefined => {
    if (!(schema instanceof z.ZodType)) return undefined;
    for (const input of inputs) {
      const r = schema.safeParse(input);
      if (r.success) continue;
      // as fastify-type-provider-zod hands zod's issues to the error handler
      const issues = r.error.issues.map(({ path, code, message, ...params }) => ({ keyword: code, instancePath: `/${path.map(String).join('/')}`, message, params }));
      const { body } = validationError(routeKey, context, issues);
      if (body.error === 'invalid_request') return body.detail;
    }
    return undefined;
  };
  const { body, querystring, params, consumes } = schemas;
  const base = example && typeof example === 'object' && !Array.isArray(example) ? example : {};
  // a form carries text only; a JSON body can also be no object at all
  const json = !Array.isArray(consumes) || consumes.includes('application/json');
  const wrong = json ? WRONG_VALUES : ['x'];
  const bodyInputs = body instanceof z.ZodType ? [{}, ...keysOf(body).flatMap((k) => wrong.map((v) => ({ ...base, [k]: v }))), ...(json ? [[]] : [])] : [];
  const queryKeys = querystring instanceof z.ZodType ? keysOf(querystring).sort((a, b) => Number(b === 'limit') - Number(a === 'limit')) : [];
  const paramKeys = params instanceof z.ZodType ? keysOf(params) : [];
  return (
    first('body', body, bodyInputs) ??
    first('querystring', querystring, queryKeys.flatMap((k) => WRONG_QUERY_VALUES.map((v) => ({ [k]: v })))) ??
    first('params', params, paramKeys.map((k) => ({ [k]: 'x' })))
  );
}

// ---- error examples ----
// Each error example of /openapi.json is a body the service sends for that code on that operation (spec §7, C6.1):
// its text as the domain, the auth layer or the app's error handler writes it, with realistic values where the text
// has variable parts. test/http/openapi-examples.test.ts sends requests that trigger a sample of them and compares.

/** The credentials an operation takes, as its security section names them (openapi.ts securityFor). */
export type ExampleCredentials = Array<'cpo' | 'partner' | 'personal'> | 'admin' | 'metrics' | undefined;

export interface ErrorExampleContext {
  operationId: string;
  credentials: ExampleCredentials;
  /** the scope the operation's security names, for 403 Insufficient scope */
  scope?: string | undefined;
  env: 'sandbox' | 'production';
  maxBodyBytes: number;
  streamMaxPerToken: number;
  callTimeoutSeconds: number;
  /** what the operation's own schemas answer for a bad field (invalidRequestDetail), when they check any */
  invalidRequest?: string | undefined;
}

export interface ErrorExample {
  key: string;
  summary: string;
  value: Record<string, unknown>;
}

const ID = '3f6c2a4e-8b1d-4c7e-9a2f-5d0e1b7c9a31';
const REQUEST_ID = '0b6f2c1e-5d0a-4c57-9a43-2f0e8c3b7d11';
const MONTH = '2026-10';
const EMAIL = 'anna.devries@gmail.com';

/** The detail of each code where it reads the same on every operation that answers it. */
const DETAILS: Record<string, string> = {
  invalid_json: 'The request body is not valid JSON.',
  unsupported_media_type: 'Send the body as application/json.',
  internal_error: `An unexpected error occurred (request ${REQUEST_ID}).`,
  service_unavailable: `The database is unavailable or too slow right now; retry in ${DB_RETRY_AFTER_SECONDS} seconds (request ${REQUEST_ID}).`,
  not_ready: 'Start-up is not complete: loading the catalog.',
  // POST /oauth/token (C1.1)
  invalid_client: 'unknown client or wrong client_secret',
  unsupported_grant_type: 'only grant_type=client_credentials is supported',
  invalid_scope: 'the client does not hold: cpo:sessions:write',
  // POST /v1/accounts, POST /v1/connections:update
  invalid_type: 'type must be one of particulier, zakelijk, vve.',
  invalid_payout_handler: 'payout_handler must be one of joulo_pays_customer, via_cpo_invoicing.',
  invalid_iban: 'iban must be 15 to 34 letters and digits after removing whitespace.',
  person_required: 'person.full_name is required.',
  invalid_ean: 'connection.ean_code must be 18 digits.',
  address_required: 'connection.city is required.',
  ean_in_use: `EAN ${EXAMPLE_EAN} is already registered.`,
  ean_address_mismatch: `The EAN register lists EAN ${EXAMPLE_EAN} at another address.`,
  ean_not_dutch: 'EAN 541685900000000001 does not look Dutch (a Dutch connection EAN starts with 871).',
  account_create_failed: `The account could not be created; retry the request (request ${REQUEST_ID}).`,
  target_required: 'Name the connection: connection_id, account_id or cpo_external_ref.',
  connection_not_found: 'No such connection for this partner.',
  ambiguous_connection: 'The account has several active connections; send connection_id.',
  connection_not_active: 'The connection is archived and can no longer be changed.',
  mandate_signed: 'The machtiging of this connection is signed; send acknowledge_mandate_lapses: true to change the EAN or address (the machtiging then lapses).',
  ere_booked: 'A delivered month of this connection is already registered as ERE; it can no longer be corrected.',
  mandate_already_active: 'The machtiging of this connection is already signed.',
  // POST /v1/chargers, POST /chargers
  invalid_account_id: 'account_id must be a uuid.',
  invalid_catalog_charger_id: 'catalog_charger_id must be a uuid of this environment’s catalog.',
  vendor_and_model_required: 'Send catalog_charger_id, or both ocpp_vendor and ocpp_model.',
  account_not_found: 'No such account for this partner.',
  catalog_not_found: 'No catalog model with this id in this environment (ids differ between sandbox and production).',
  no_connection: 'The account has no active connection; create one first.',
  serial_required: 'The account already has a charger; send serial_number for every further charger.',
  catalog_not_mid: 'KEBA KeContact P30 c-series (uncalibrated meter) has no MID-certified meter; it cannot count toward ERE.',
  charger_limit: `An account holds at most ${MAX_ACTIVE_CHARGERS} active chargers.`,
  ocpp_identity_taken: 'The OCPP identity ALFEN-0042 is already registered.',
  // Partner API
  'Failed to create drafts': 'The drafts could not be stored; nothing was added. The request can be retried.',
  // sandbox helpers and the admin API
  invalid_month: 'month must be YYYY-MM',
  energy_month_not_found: `no energy month ${ID}`,
  invalid_transition: 'a registered month cannot take the action reject',
  energy_held: `${MONTH} holds energy above the connection's capacity (connection_capacity); accept or reject it first`,
  month_not_covered: `${MONTH} ended before the machtiging came into force (2026-11-03T14:22:05Z); its energy earns no ERE`,
  account_not_eligible: 'the account is not ERE-eligible (C2.8); its energy cannot be registered',
  charger_not_found: `No charger ${ID}.`,
  charger_offline: 'The charger has no open connection.',
  charger_call_error: 'The charger answered with an error: NotSupported',
  invalid_public_key: 'public_key is not an EC public key (hex or base64 DER, PEM, or a point with its curve)',
  partner_not_found: `No partner ${ID}`,
  cpo_client_not_found: 'No CPO client cpo_2f9d4c1a7b',
  user_not_found: `No user ${ID}`,
  job_not_found: 'No job ean-check',
  job_running: 'Job ean-recheck is already running (in this process or another); try again later.',
  job_failed: 'Job partitions failed (its run is in GET /admin/jobs): meter_readings: cannot create the month partition meter_readings_2027_03: permission denied for schema public (42501). …',
  suppression_not_found: `${EMAIL} is not on the suppression list`,
  suppression_unsubscribed: `${EMAIL} unsubscribed through the link in one of its e-mails (2026-11-02T09:14:05Z); only its owner can undo that, not the operator`,
  outbox_message_not_found: `No message ${ID} in the outbox`,
  outbox_message_not_failed: `Message ${ID} is sent; only a failed message can be queued again`,
  sale_not_found: `no sale ${ID}`,
  allocation_not_found: `no allocation ${ID}`,
  sale_exceeded: 'the sale has 12.50 ERE left to allocate',
  insufficient_registered_ere: 'the account has 3.20 registered ERE of 2026 not yet allocated',
  nothing_payable: 'the account has no payable ERE',
  session_not_found: `no session ${ID}`,
  session_not_held: `session ${ID} has no step waiting for review (review: accepted)`,
  quarantine_not_replayable: 'A part set aside from an applied message is kept for review only',
  not_found: 'No such quarantined message',
};

/** Where an operation words a code its own way (operationId → code → detail). */
const OPERATION_DETAILS: Record<string, Record<string, string>> = {
  // its body is checked by the domain (domain/connections/update.ts)
  updateConnection: { address_required: 'connection.city cannot be empty.', invalid_request: 'acknowledge_mandate_lapses must be a boolean.' },
  sandboxSignMandate: { connection_not_found: 'No such connection for this caller.', connection_not_active: 'The connection is archived.' },
  sandboxRegisterEre: {
    connection_not_found: `no connection ${ID} for this partner`,
    energy_month_not_found: `no energy delivered for ${MONTH} on this connection`,
    invalid_transition: `${MONTH} was rejected in review`,
    energy_held: `${MONTH} holds energy above the connection's capacity; an operator decides first`,
  },
  registerMyCharger: { account_not_found: `No account ${ID} of yours.` },
  adminRegisterUserCharger: { account_not_found: `No account ${ID} of yours.`, user_not_found: `No user ${ID}.` },
  adminLinkAccountToUser: { account_not_found: `No account ${ID}` },
  adminAllocateEre: { account_not_found: `no account ${ID}` },
  adminCreatePayout: { account_not_found: `no account ${ID}` },
  adminMarkAllocationPayable: { invalid_transition: 'a paid allocation cannot become payable' },
  // the Partner API checks its bodies itself (domain/partners): what it says of a field of the wrong type
  uploadPartnerCustomers: { invalid_request: 'send_invite must be a boolean' },
  importPartnerDrafts: { invalid_request: 'rows must be an array of draft rows' },
};

/** What a caller told the wrong kind of credential reads (auth.ts, C1.2): the route's credential, then the one sent. */
const CREDENTIAL_NAMES = {
  cpo: 'a CPO access token (OAuth 2.0 client credentials, POST /oauth/token)',
  partner: 'a partner API key',
  personal: 'a personal API token',
} as const;

/** The 401 examples of an operation's credential family (auth.ts, admin-auth.ts, GET /metrics in ops.routes.ts). */
function unauthorizedExamples(code: string, ctx: ErrorExampleContext): ErrorExample[] {
  const key = exampleKey(code);
  const c = ctx.credentials;
  if (c === 'metrics') {
    return [{ key, summary: 'no bearer token, or not METRICS_TOKEN', value: { error: code, detail: 'GET /metrics requires Authorization: Bearer <METRICS_TOKEN>.' } }];
  }
  const missing: ErrorExample = { key, summary: 'missing, unknown, expired or revoked credential (no detail)', value: { error: code } };
  if (!c || c === 'admin') return [{ ...missing, summary: c === 'admin' ? 'missing or wrong ADMIN_TOKEN (no detail)' : missing.summary }];
  const takes = c.map((k) => CREDENTIAL_NAMES[k]).join(' or ');
  // a partner key on a route that does not take it is a 403, so the wrong kind shown is a token
  const sent = c.includes('cpo') ? 'personal API token' : 'CPO access token';
  const out = [
    missing,
    {
      key: `${key}.other_credential`,
      summary: `a ${sent}: the detail names the credential this route takes`,
      value: { error: code, detail: `This route takes ${takes}; a ${sent} is not accepted here.` },
    },
  ];
  if (c.includes('partner')) {
    const other = ctx.env === 'sandbox' ? PREFIX.partnerLive : PREFIX.partnerTest;
    const detail = wrongHostDetail(`${other}2f9d4c1a7b`, ctx.env);
    if (detail) out.push({ key: `${key}.other_host`, summary: 'a partner API key of the other host (spec §5)', value: { error: code, detail } });
  }
  return out;
}

/** The example bodies of one error code on one operation: one, or for a 401 one per case a caller meets. */
export function errorExamples(code: string, ctx: ErrorExampleContext): ErrorExample[] {
  if (code === INVALID_TOKEN) return unauthorizedExamples(code, ctx);
  const one = (value: Record<string, unknown>): ErrorExample[] => [{ key: exampleKey(code), summary: code, value }];
  const own = OPERATION_DETAILS[ctx.operationId]?.[code];
  if (own !== undefined) return one({ error: code, detail: own });
  switch (code) {
    case 'Too many requests':
      return one({ error: code, retry_after_seconds: 12 });
    case 'Insufficient scope': {
      const scope = ctx.scope ?? 'chargers:read';
      const lacking: ErrorExample = { key: exampleKey(code), summary: 'a token without the scope', value: { error: code, required_scope: scope, detail: `This token lacks the scope ${scope}.` } };
      // D239: a partner key on a scoped CPO or Personal route hears this code too (auth.ts), with its own detail
      if (Array.isArray(ctx.credentials) && !ctx.credentials.includes('partner')) {
        return [
          lacking,
          {
            key: `${exampleKey(code)}.partner_key`,
            summary: 'a partner API key (it reaches only Partner API routes)',
            value: { error: code, required_scope: scope, detail: `A partner API key reaches only Partner API routes; this route needs ${scope}.` },
          },
        ];
      }
      return [lacking];
    }
    case 'partner_api_key_scope':
      return one({ error: code, detail: `A partner API key reaches only Partner API routes${ctx.credentials === 'admin' ? ', not the admin API' : ''}.` });
    case 'consent_required':
      // spec §7: a `message`, not a detail (domain/partners)
      return one({ error: code, message: 'Set consent: true to confirm that every customer in this request agreed to be pre-registered and to receive the claim link.' });
    case 'catalog_unresolved':
      return one({
        error: code,
        detail: 'No catalog model matches vendor "Webasto" and model "Live"; the brand\'s MID models are listed in suggestions.',
        suggestions: [{ catalog_charger_id: 'a41c7e02-5b9d-4f3a-8e61-0c2d9b7f4e15', brand: 'Webasto', model: 'Unite' }],
      });
    case 'invalid_request':
      return one({ error: code, detail: ctx.invalidRequest ?? 'The URL path is not valid percent-encoded UTF-8.' });
    case 'payload_too_large':
      return one({ error: code, detail: `The request body exceeds ${ctx.maxBodyBytes} bytes.` });
    case 'too_many_streams':
      return one({ error: code, detail: `This token already has ${ctx.streamMaxPerToken} open streams (at most ${ctx.streamMaxPerToken}); close one first.` });
    case 'charger_timeout': {
      const action = ctx.operationId === 'adminRotateChargerPassword' ? 'ChangeConfiguration' : 'Reset';
      return one({ error: code, detail: `The charger did not answer ${action} within ${ctx.callTimeoutSeconds} s.` });
    }
  }
  const detail = DETAILS[code];
  // the bodies the spec fixes without a detail (C6.1): Authentication is temporarily unavailable…, No partner is
  // linked…, customers must be a non-empty array…
  return one(detail === undefined ? { error: code } : { error: code, detail });
}

/** A key for an example map: letters, digits, '.', '-', '_'. */
export const exampleKey = (code: string): string => code.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^_|_$/g, '');
