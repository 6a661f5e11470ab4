// GET /openapi.json: OpenAPI 3.1 generated from the zod schemas of every route, good enough to generate a client
// from. The security section of each operation comes from the route's auth declaration (src/http/auth.ts);
// operationIds and tags from openapi-operations.ts; error responses from openapi-errors.ts. GET /docs renders it
// (src/http/docs.ts).
import { STATUS_CODES } from 'node:http';
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import { z } from 'zod';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import type { Deps } from '../deps.ts';
import type { RouteAuth } from './auth.ts';
import { registerDocs } from './docs.ts';
import {
  codesOf,
  ERROR_BODY_REF,
  errorBodyComponent,
  EXTRA_ERROR_CODES,
  genericErrorCodes,
  platformResponses,
  RESPONSE_HEADERS,
  responseHeaderNames,
  payloadTooLargeResponse, unsupportedMediaTypeResponse,
  type RateLimitKind,
} from './openapi-errors.ts';
import { errorExamples, type ExampleCredentials, invalidRequestDetail, REQUEST_EXAMPLES } from './openapi-examples.ts';
import { openApiPath, operationIdFor, TAG_OVERRIDES, TAGS } from './openapi-operations.ts';

export { platformResponses };

const CPO_SCOPES = {
  'cpo:accounts:write': 'create accounts, correct connections, issue mandate links',
  'cpo:accounts:read': 'list accounts and ERE positions',
  'cpo:chargers:write': 'register chargers',
  'cpo:sessions:write': 'deliver monthly kWh',
};

export const SECURITY_SCHEMES = {
  cpoToken: {
    type: 'oauth2',
    description:
      'CPO API: OAuth 2.0 client-credentials access token (one hour, no refresh token), bound to one partner. ' +
      'POST /oauth/token with grant_type=client_credentials, client_id and client_secret in the body (JSON or form); HTTP Basic is refused.',
    flows: { clientCredentials: { tokenUrl: '/oauth/token', scopes: CPO_SCOPES, 'x-scalar-credentials-location': 'body' } },
  },
  partnerKey: { type: 'http', scheme: 'bearer', description: 'Partner API key (pk_live_… production, pk_test_… sandbox).' },
  personalToken: { type: 'http', scheme: 'bearer', description: 'Personal API token with scopes chargers:read / chargers:write.' },
  adminToken: { type: 'http', scheme: 'bearer', description: 'Operator token (ADMIN_TOKEN).' },
} as const;

export function securityFor(auth: RouteAuth | undefined): Array<Record<string, string[]>> | undefined {
  if (!auth || 'public' in auth) return undefined;
  if ('admin' in auth) return [{ adminToken: [] }];
  return auth.accepts.map((k): Record<string, string[]> => {
    if (k === 'cpo') return { cpoToken: auth.scope ? [auth.scope] : [] };
    if (k === 'partner') return { partnerKey: [] };
    return { personalToken: auth.scope ? [auth.scope] : [] };
  });
}

/** Whether a part of the API is switched on here (C1.6: admin only with ADMIN_TOKEN; C2.6: sandbox only on sandbox). */
function partIsOff(deps: Deps, path: string): boolean {
  const under = (p: string) => path === p || path.startsWith(p + '/');
  return (!deps.config.ADMIN_TOKEN && under('/admin')) || (deps.config.APP_ENV !== 'sandbox' && under('/sandbox'));
}

function description(deps: Deps): string {
  const base = new URL(deps.config.PUBLIC_BASE_URL);
  // D193: with the path of PUBLIC_BASE_URL (a proxy serving the service under /gw), as the start banner names it
  const ws = `${base.protocol === 'https:' ? 'wss' : 'ws'}://${base.host}${base.pathname.replace(/\/+$/, '')}/ocpp/{identity}`;
  return [
    'Charging-credit service: register MID-metered charging energy as emission-reduction units (ERE).',
    '',
    '- **CPO API** (`/v1`): OAuth 2.0 client-credentials token from `POST /oauth/token`; create the account, issue the machtiging link, register the charger, deliver monthly kWh, read ERE positions.',
    '- **Partner API** (`/partner`): partner API key; upload customers as claimable drafts.',
    '- **Personal API**: personal API token; your chargers, sessions, energy and ERE position.',
    deps.config.APP_ENV === 'sandbox' ? '- **Sandbox helpers** (`/sandbox`, this sandbox only): sign a machtiging, register a month, run the EAN re-check.' : '',
    '',
    `OCPP 1.6J and 2.0.1 chargers connect at \`${ws}\` (HTTP Basic: identity and charger password).`,
    '',
    // D194: the shapes the specification fixes, not one shape for all
    'An error is `{"error": "<code>", "detail": "<sentence>"}`: switch on `error`, never on `detail`. The specification fixes three other shapes, each listed with its operations: ' +
      '401 `{"error": "Missing or invalid API token"}` (a missing, unknown, expired or revoked credential; with `detail` when the credential is of another kind than the route takes, or a partner key on the wrong host); ' +
      '403 `{"error": "Insufficient scope", "required_scope", "detail"}` (a token without the scope; a partner key on a CPO or Personal route gets `{"error": "Insufficient scope", "required_scope"}`, or `{"error": "partner_api_key_scope"}` on a route no scope governs); ' +
      'and 429 `{"error": "Too many requests", "retry_after_seconds"}` with `Retry-After`.',
    'Besides the errors each operation lists, the server answers any request it cannot take as such: 400 `invalid_request` (not valid HTTP/1.1, no Host header, or a path that does not decode), 408 `request_timeout` (not received in full in time), 413 `payload_too_large`, 414 `uri_too_long` (a path parameter over 100 characters), 415 `unsupported_media_type` (a body in a media type the server does not read: send JSON, or a form where the operation takes one), 417 `expectation_failed` (an Expect other than 100-continue) and 431 `headers_too_large` (request line and headers over 16 KiB).',
  ]
    .filter((l, i, all) => l !== '' || all[i - 1] !== '')
    .join('\n');
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const CREDENTIAL_OF_SCHEME: Record<string, 'cpo' | 'partner' | 'personal'> = { cpoToken: 'cpo', partnerKey: 'partner', personalToken: 'personal' };

/** The credentials an operation takes, read from its security section (securityFor). */
function credentialsOf(op: Json): ExampleCredentials {
  if (op.operationId === 'getMetrics') return 'metrics';
  const schemes = ((op.security ?? []) as Array<Record<string, unknown>>).map((s) => Object.keys(s)[0]!);
  if (schemes.includes('adminToken')) return 'admin';
  const kinds = schemes.map((s) => CREDENTIAL_OF_SCHEME[s]).filter((k) => k !== undefined);
  return kinds.length ? kinds : undefined;
}

/** Every error response refers to ErrorBody and shows an example of what the service sends for each error string it names (D227). */
function documentErrors(deps: Deps, op: Json, invalidRequest: string | undefined): void {
  const scope = Object.values((op.security?.[0] ?? {}) as Record<string, string[]>)[0]?.[0];
  const context = {
    operationId: String(op.operationId),
    credentials: credentialsOf(op),
    scope,
    env: deps.config.APP_ENV,
    maxBodyBytes: deps.config.HTTP_MAX_BODY_BYTES,
    streamMaxPerToken: deps.config.STREAM_MAX_PER_TOKEN,
    callTimeoutSeconds: deps.config.OCPP_CALL_TIMEOUT_SECONDS,
    invalidRequest,
  };
  for (const [status, response] of Object.entries(op.responses ?? {}) as Array<[string, Json]>) {
    if (Number(status) < 400) continue;
    const media = response.content?.['application/json'];
    if (!media) continue;
    const takesJson = Boolean(op.requestBody?.content?.['application/json']);
    const described = typeof response.description === 'string' ? response.description : '';
    const own = codesOf(described);
    const codes = [...new Set([...own, ...(EXTRA_ERROR_CODES[`${op.operationId} ${status}`] ?? []), ...genericErrorCodes(status, takesJson)])];
    const extras = Object.fromEntries(Object.entries((media.schema?.properties ?? {}) as Json).filter(([k]) => k !== 'error' && k !== 'detail'));
    media.schema = Object.keys(extras).length
      ? { allOf: [{ $ref: ERROR_BODY_REF }, { type: 'object', properties: extras }] }
      : { $ref: ERROR_BODY_REF };
    delete media.example;
    if (codes.length) {
      media.examples = Object.fromEntries(codes.flatMap((c) => errorExamples(c, context)).map((e) => [e.key, { summary: e.summary, value: e.value }]));
      // "error: a | b (note)" keeps its note; a description naming no code is kept whole as the note
      const note = own.length ? /\s+\((.*)\)$/s.exec(described)?.[1] : described && described !== STATUS_CODES[Number(status)] ? described : undefined;
      response.description = `${codes.map((c) => `\`${c}\``).join(', ')}${note ? ` (${note})` : ''}`;
    }
  }
}

function finishDocument(deps: Deps, doc: Json): Json {
  const base = deps.config.PUBLIC_BASE_URL; // read now: with PORT=0 it is known only after listen
  doc.info.description = description(deps);
  doc.servers = [{ url: base }];
  doc.components.securitySchemes.cpoToken.flows.clientCredentials.tokenUrl = `${base}/oauth/token`;
  if (!deps.config.ADMIN_TOKEN) delete doc.components.securitySchemes.adminToken;
  doc.components.schemas = { ...(doc.components.schemas ?? {}), ErrorBody: errorBodyComponent() };
  const used = new Set<string>();
  const headersUsed = new Set<string>();
  for (const ops of Object.values(doc.paths ?? {}) as Json[]) {
    for (const op of Object.values(ops) as Json[]) {
      for (const t of op.tags ?? []) used.add(t);
      // the transform's marks (below), read and removed
      const rateLimit = op['x-rate-limit'] as RateLimitKind | undefined;
      delete op['x-rate-limit'];
      const invalidRequest = op['x-invalid-request'] as string | undefined;
      delete op['x-invalid-request'];
      if (op['x-body-optional'] && op.requestBody) op.requestBody.required = false;
      delete op['x-body-optional'];
      for (const [status, res] of Object.entries((op.responses ?? {}) as Json)) {
        if (res.description === 'Default Response') res.description = STATUS_CODES[Number(status)] ?? 'Response';
        // a body that is not JSON (the event stream) names its media type in its schema's contentMediaType
        const schema = res.content?.['application/json']?.schema;
        if (typeof schema?.contentMediaType === 'string') res.content = { [schema.contentMediaType]: { schema } };
        const names = responseHeaderNames(rateLimit, op.operationId, status);
        if (names.length) {
          res.headers = Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));
          for (const n of names) headersUsed.add(n);
        }
      }
      documentErrors(deps, op, invalidRequest);
      const example = REQUEST_EXAMPLES[op.operationId];
      const media = op.requestBody?.content?.['application/json'];
      if (example !== undefined && media && !media.example && !media.examples) media.example = example;
    }
  }
  doc.tags = TAGS.filter((t) => used.has(t.name)).map((t) => ({ ...t }));
  if (headersUsed.size) doc.components.headers = Object.fromEntries(Object.entries(RESPONSE_HEADERS).filter(([n]) => headersUsed.has(n)).map(([n, h]) => [n, structuredClone(h)]));
  return doc;
}

export async function registerOpenApi(app: FastifyInstance, deps: Deps): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'ere-gateway', version: '1.0.0', description: '' },
      servers: [{ url: deps.config.PUBLIC_BASE_URL }],
      components: { securitySchemes: structuredClone(SECURITY_SCHEMES) as never },
    },
    transform: (arg) => {
      const out = jsonSchemaTransform(arg as never) as { schema: Record<string, unknown>; url: string };
      const config = arg.route.config as { auth?: RouteAuth; rateLimit?: unknown } | undefined;
      const auth = config?.auth;
      const method = String([arg.route.method].flat()[0]).toUpperCase();
      const path = openApiPath(arg.url);
      const schema: Record<string, unknown> = { ...out.schema, operationId: operationIdFor(method, path) };
      if (partIsOff(deps, path)) schema['hide'] = true;
      const tag = TAG_OVERRIDES[`${method} ${path}`];
      if (tag) schema['tags'] = [tag];
      const isAdmin = Boolean(auth && 'admin' in auth);
      const rateLimited = config?.rateLimit !== false && !isAdmin;
      // marks for finishDocument (x- keys reach the operation): the rate-limit headers, a body that may be left out
      const rateLimit: RateLimitKind | undefined = rateLimited ? 'requests' : isAdmin ? 'admin-failures' : undefined;
      if (rateLimit) schema['x-rate-limit'] = rateLimit;
      const body = (arg.schema as { body?: unknown } | undefined)?.body;
      if (body instanceof z.ZodType && body.safeParse(undefined).success) schema['x-body-optional'] = true;
      // D227: the invalid_request example is what this route's own schemas answer for a bad field
      const operationId = schema['operationId'] as string;
      const example = REQUEST_EXAMPLES[operationId] ?? (body instanceof z.ZodType ? (body.meta()?.examples as unknown[] | undefined)?.[0] : undefined);
      const invalidRequest = invalidRequestDetail(`${method} ${arg.url}`, (arg.schema ?? {}) as Record<string, unknown>, example);
      if (invalidRequest) schema['x-invalid-request'] = invalidRequest;
      if (schema['response']) {
        // a route's own answer wins when it names its error strings; a bare ErrorBody gives way to the platform's
        const own = schema['response'] as Record<string, { description?: unknown }>;
        const platform = { ...platformResponses(auth, rateLimited), ...(body ? { 413: payloadTooLargeResponse(), 415: unsupportedMediaTypeResponse() } : {}) };
        const named = Object.fromEntries(Object.entries(own).filter(([status]) => !(status in platform) || codesOf(own[status]?.description).length > 0));
        schema['response'] = { ...platform, ...named };
      }
      const security = securityFor(auth);
      if (security) schema['security'] = security;
      else if (auth && 'public' in auth) schema['security'] = [];
      return { schema, url: out.url };
    },
    transformObject: (documentObject) => finishDocument(deps, (documentObject as { openapiObject: Json }).openapiObject),
  });
  // D154: the document cannot change while the process runs (what is shown follows APP_ENV and ADMIN_TOKEN, read
  // at start; @fastify/swagger builds the object once, at the first call, which comes after listen has fixed
  // PUBLIC_BASE_URL), so its bytes are made once too. Serialized per request, its 300 KB cost ~5 ms each, which a
  // client without a credential could ask for as often as it liked; a Buffer is also not encoded again per write.
  let bytes: Buffer | undefined;
  app.get('/openapi.json', { schema: { hide: true }, config: { auth: { public: true } } }, async (_req, reply) =>
    reply.type('application/json; charset=utf-8').send((bytes ??= Buffer.from(JSON.stringify(app.swagger())))),
  );
  await registerDocs(app, () => deps.config.PUBLIC_BASE_URL);
}
