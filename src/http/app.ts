// buildApp(deps) returns a fastify instance and never listens (ARCHITECTURE.md): main.ts listens, tests inject.
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Server as HttpsServer } from 'node:https';
import Fastify, { type FastifyError, type FastifyReply } from 'fastify';
import formbody from '@fastify/formbody';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError, serializerCompiler } from 'fastify-type-provider-zod';
import type { Deps } from '../deps.ts';
import { isDomainError } from '../domain/errors.ts';
import { registerAuth, type RouteAuth } from './auth.ts';
import { answerClientError, refuseMissingHost, shapeServerAnswers } from './client-errors.ts';
import { errorBody, statusForCode } from './errors.ts';
import { answerDatabaseUnavailable, databaseUnavailableError } from './db-unavailable.ts';
import { validatorCompiler } from './no-nul.ts';
import { registerOpenApi } from './openapi.ts';
import { validationError } from './validation-codes.ts';
import { registerReplyGuard } from './plugins/reply-guard.ts';
import { registerAdminLog } from './plugins/admin-log.ts';
import { commonHeaders } from './plugins/no-store.ts';
import { applyServerBounds, tlsHandshakeTimeout, trustProxyOption } from './server-bounds.ts';
import { watchTlsFiles } from './tls-reload.ts';
import { allRoutes } from './routes/index.ts';
import { dashboardNotFound } from './routes/dashboard.routes.ts';
import { FORM_MEDIA_TYPE, type App, type RouteRegistrar } from './types.ts';

export interface BuildAppOptions {
  /** Hooks run after the core plugins and before the routes (rate limits, metrics). */
  plugins?: Array<(app: App, deps: Deps) => Promise<void> | void>;
  /** Route files registered after the service's own (tests register routes with given declarations). */
  routes?: RouteRegistrar[];
}

export interface RouteInfo {
  method: string;
  url: string;
  auth: RouteAuth | undefined;
  /** hidden from the OpenAPI document (the docs UI itself, /openapi.json) */
  hidden: boolean;
}
const routeTables = new WeakMap<object, RouteInfo[]>();

/** Every route registered on an app built by buildApp (tests compare it with /openapi.json). */
export function registeredRoutes(app: App): RouteInfo[] {
  return routeTables.get(app) ?? [];
}

export async function buildApp(deps: Deps, opts: BuildAppOptions = {}): Promise<App> {
  const { TLS_CERT_FILE, TLS_KEY_FILE, TLS_CLIENT_CA_FILE } = deps.config;
  const app = Fastify({
    // TLS on the service port when configured (OCPP Security Profile 2 without a TLS proxy, C4.2); the OCPP
    // WebSocket rides on the same server's upgrade event, so it gets wss:// with no change of its own.
    // Security Profile 3 (TLS_CLIENT_CA_FILE): every TLS client is asked for a certificate, but the handshake
    // does not fail without one (rejectUnauthorized false): HTTP API clients on the same port have none. The
    // OCPP upgrade then requires a trusted certificate whose CN is the identity (src/ocpp/charger-auth.ts).
    ...(TLS_CERT_FILE && TLS_KEY_FILE
      ? {
          https: {
            cert: fs.readFileSync(TLS_CERT_FILE),
            key: fs.readFileSync(TLS_KEY_FILE),
            handshakeTimeout: tlsHandshakeTimeout(deps.config),
            ...(TLS_CLIENT_CA_FILE ? { ca: fs.readFileSync(TLS_CLIENT_CA_FILE), requestCert: true, rejectUnauthorized: false } : {}),
          },
        }
      : {}),
    loggerInstance: deps.logger,
    bodyLimit: deps.config.HTTP_MAX_BODY_BYTES,
    // C1.5: false = the socket's address; a hop count or proxy addresses/CIDRs (never everyone, see config.ts)
    trustProxy: trustProxyOption(deps.config.TRUST_PROXY),
    // C4.12: also set on the server with the headers timeout and the check interval (server-bounds.ts)
    requestTimeout: deps.config.HTTP_REQUEST_TIMEOUT_SECONDS * 1000,
    keepAliveTimeout: deps.config.HTTP_KEEP_ALIVE_TIMEOUT_SECONDS * 1000,
    // The caller's x-request-id is kept when it is a sane token (proxies set one); otherwise a UUID.
    requestIdHeader: false,
    genReqId: (req) => {
      const h = req.headers['x-request-id'];
      return typeof h === 'string' && /^[\w.:@-]{1,128}$/.test(h) ? h : crypto.randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: false },
    // what fails before any route runs, answered in the documented shape rather than fastify's own {error, code,
    // message, statusCode}: a path whose percent-encoding does not decode (`%zz`, bytes that are not UTF-8), a path
    // parameter longer than the router takes (100 characters)
    frameworkErrors: (error, req, reply: FastifyReply) => {
      reply.header('x-request-id', req.id); // no route's hooks run for these
      commonHeaders(reply, deps.config.PUBLIC_BASE_URL); // D233
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return reply.code(statusForCode('uri_too_long')).send({ error: 'uri_too_long', detail: 'A path parameter is longer than 100 characters.' });
      const detail = error.code === 'FST_ERR_BAD_URL' ? 'The URL path is not valid percent-encoded UTF-8.' : 'The request could not be routed.';
      return reply.code(400).send({ error: 'invalid_request', detail });
    },
    // what Node's HTTP parser refuses before fastify sees a request (malformed request line or headers, headers over
    // 16 KiB, a request timeout), in the same shape (client-errors.ts, D89)
    clientErrorHandler: answerClientError,
    // a request that arrives while the app closes is answered below, in the service's shape (fastify's own 503 body
    // is {error: 'Service Unavailable', message, statusCode})
    return503OnClosing: false,
  }).withTypeProvider<import('fastify-type-provider-zod').ZodTypeProvider>() as unknown as App;
  applyServerBounds(app.server, deps.config, deps.metrics);
  // D261: a renewed certificate is served without a restart (a change of the files, or SIGHUP)
  if (TLS_CERT_FILE && TLS_KEY_FILE) {
    const stopWatching = watchTlsFiles(deps, app.server as unknown as HttpsServer);
    app.addHook('onClose', async () => stopWatching());
  }
  // what Node's server would answer itself (an unknown Expect, CONNECT, no Host), in the same shape (D89)
  shapeServerAnswers(app.server);
  app.addHook('onRequest', refuseMissingHost);
  // while the app closes (after the OCPP sockets drained, D120), a new request is refused in the documented shape and its
  // connection closed; /readyz answers its own not_ready (its route knows the service is stopping)
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (req, reply) => {
    if (!closing || req.routeOptions.url === '/readyz') return;
    return reply.code(503).header('connection', 'close').header('retry-after', '1').send({ error: 'service_unavailable', detail: 'The service is stopping.' });
  });

  const table: RouteInfo[] = [];
  routeTables.set(app, table);
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) {
      table.push({
        method,
        url: r.url,
        auth: (r.config as { auth?: RouteAuth } | undefined)?.auth,
        hidden: Boolean((r.schema as { hide?: boolean } | undefined)?.hide),
      });
    }
  });

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerReplyGuard(app);
  registerAdminLog(app);
  app.addHook('onSend', async (req, reply, payload) => {
    reply.header('x-request-id', req.id);
    return payload;
  });

  app.setErrorHandler((error: unknown, req, reply) => {
    if (isDomainError(error)) {
      return reply.code(statusForCode(error.code)).send(errorBody(error));
    }
    const err = error as FastifyError;
    if (hasZodFastifySchemaValidationErrors(err)) {
      const { status, body } = validationError(`${req.method} ${req.routeOptions.url ?? ''}`, err.validationContext ?? 'request', err.validation);
      return reply.code(status).send(body);
    }
    switch (err.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return reply.code(400).send({ error: 'invalid_json', detail: 'The request body is not valid JSON.' });
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply
          .code(413)
          .send({ error: 'payload_too_large', detail: `The request body exceeds ${deps.config.HTTP_MAX_BODY_BYTES} bytes.` });
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply
          .code(415)
          .send({ error: 'unsupported_media_type', detail: 'Send the body as application/json.' });
    }
    if (err instanceof SyntaxError && err.statusCode === 400) {
      return reply.code(400).send({ error: 'invalid_json', detail: 'The request body is not valid JSON.' });
    }
    if (isResponseSerializationError(err)) {
      req.log.error({ err }, 'response did not match its schema');
      return reply.code(500).send({ error: 'internal_error', detail: 'An unexpected error occurred.' });
    }
    // D155: a database that cannot answer right now (statement timeout, a lost connection) is 503, not a bug
    const dbDown = databaseUnavailableError(err);
    if (dbDown) return answerDatabaseUnavailable(req, reply, dbDown);
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 429) return reply.code(429).send(err as unknown as object);
    if (status >= 500) {
      // A 5xx never shows internals: the request id is the handle for the operator.
      req.log.error({ err }, 'unhandled error');
      return reply.code(500).send({ error: 'internal_error', detail: `An unexpected error occurred (request ${req.id}).` });
    }
    return reply.code(status).send({ error: 'invalid_request', detail: err.message });
  });

  // D240: a GET or HEAD under /dashboard answers an HTML page in the owner's language (a person typed or guessed it)
  const dashboardPageNotFound = dashboardNotFound(deps);
  app.setNotFoundHandler((req, reply) => {
    if (dashboardPageNotFound(req, reply)) return;
    reply.code(404).send({ error: 'not_found', detail: `No route ${req.method} ${req.url.split('?')[0]}` });
  });

  // C1.6: without ADMIN_TOKEN every /admin path is 404; C2.6: on production every /sandbox path is 404.
  app.addHook('onRequest', async (req, reply) => {
    const p = req.url;
    // the matched route too: a percent-encoded path (/%61dmin/…) reaches the same route as /admin/…
    const route = req.routeOptions.url ?? '';
    const under = (prefix: string) =>
      p === prefix || p.startsWith(prefix + '/') || p.startsWith(prefix + '?') || route === prefix || route.startsWith(prefix + '/');
    const off = (!deps.config.ADMIN_TOKEN && under('/admin')) || (deps.config.APP_ENV !== 'sandbox' && under('/sandbox'));
    if (off) return reply.code(404).send({ error: 'not_found', detail: `No route ${req.method} ${p.split('?')[0]}` });
  });

  await app.register(formbody);
  // D148: bodies are JSON, or a form where the route says it takes one (schema.consumes). Fastify's own text/plain
  // parser handed a JSON document sent as text/plain to validation as one string (400 naming the first field);
  // without it such a body is 415 like any type the server does not read, and so is a form sent to a JSON-only route.
  app.removeContentTypeParser('text/plain');
  app.addHook('preValidation', async (req, reply) => {
    if (req.body === undefined || !/^application\/x-www-form-urlencoded\b/i.test(req.headers['content-type'] ?? '')) return;
    const consumes = (req.routeOptions.schema as { consumes?: readonly string[] } | undefined)?.consumes;
    if (consumes?.includes(FORM_MEDIA_TYPE)) return;
    return reply.code(415).send({ error: 'unsupported_media_type', detail: 'Send the body as application/json.' });
  });
  await registerOpenApi(app, deps);
  registerAuth(app, deps);
  for (const plugin of opts.plugins ?? []) await plugin(app, deps);
  for (const register of [...allRoutes, ...(opts.routes ?? [])]) await register(app, deps);
  return app;
}
