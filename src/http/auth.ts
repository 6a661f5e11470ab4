// One auth layer for every part (spec §5, C1.2–C1.4, C1.6). Each route declares what it takes:
//   config: { auth: { accepts: ['cpo'], scope: 'cpo:accounts:write' } }
// and the same declaration drives the OpenAPI security section (src/http/openapi.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.ts';
import type { Principal } from '../domain/credentials/tokens.ts';
import { resolveBearer } from '../domain/credentials/tokens.ts';
import { PREFIX, type Scope } from '../domain/credentials/scopes.ts';
import { checkAdmin } from './admin-auth.ts';
import { timingSafeEqualStr } from '../lib/secrets.ts';
import { DB_RETRY_AFTER_SECONDS, databaseUnavailableError, logDatabaseUnavailable, registerServiceLogger } from './db-unavailable.ts';

export type CredentialKind = 'cpo' | 'partner' | 'personal';

export type RouteAuth =
  | { public: true }
  | { admin: true }
  | { accepts: CredentialKind[]; scope?: Scope };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: RouteAuth;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

export const INVALID_TOKEN = 'Missing or invalid API token';

const CREDENTIAL_NAMES: Record<CredentialKind, string> = {
  cpo: 'a CPO access token (OAuth 2.0 client credentials, POST /oauth/token)',
  partner: 'a partner API key',
  personal: 'a personal API token',
};

function describeAccepted(kinds: CredentialKind[]): string {
  return kinds.map((k) => CREDENTIAL_NAMES[k]).join(' or ');
}

export function bearerOf(req: FastifyRequest): string | null {
  const h = req.headers.authorization;
  if (!h) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1]! : null;
}

/** Narrow request.principal for handlers: the auth hook has already refused a request without one. */
export function principalOf<K extends Principal['kind']>(req: FastifyRequest, kind: K): Extract<Principal, { kind: K }> {
  const p = req.principal;
  if (!p || p.kind !== kind) throw new Error(`route expected a ${kind} principal`);
  return p as Extract<Principal, { kind: K }>;
}

/** For an unknown partner key whose prefix belongs to the other environment: the detail of the 401. */
export function wrongHostDetail(bearer: string, env: 'sandbox' | 'production'): string | undefined {
  if (env === 'production' && bearer.startsWith(PREFIX.partnerTest)) {
    return `This is a sandbox partner API key (${PREFIX.partnerTest}…); it works only on the sandbox host, and this is the production host.`;
  }
  if (env === 'sandbox' && bearer.startsWith(PREFIX.partnerLive)) {
    return `Unknown partner API key. ${PREFIX.partnerLive}… keys are production keys and work only on the production host; this is the sandbox host.`;
  }
  return undefined;
}

const isPartnerKeyShape = (bearer: string) => bearer.startsWith(PREFIX.partnerTest) || bearer.startsWith(PREFIX.partnerLive);
const isAdminToken = (deps: Deps, bearer: string) => Boolean(deps.config.ADMIN_TOKEN && timingSafeEqualStr(bearer, deps.config.ADMIN_TOKEN));

/** Whether the bearer is a partner key on record for this host's environment (a lookup that fails says no). */
async function isPartnerKeyOfThisHost(deps: Deps, req: FastifyRequest, bearer: string): Promise<boolean> {
  try {
    const p = await resolveBearer(deps, bearer);
    return p?.kind === 'partner' && p.environment === deps.config.APP_ENV;
  } catch (err) {
    const down = databaseUnavailableError(err);
    // D267: the database away is an outage (one warn line a minute); anything else is a bug
    if (down) logDatabaseUnavailable(req, 'auth.partner_key_lookup_unavailable', down, 'credential lookup failed, the database is unavailable; the admin check decides');
    else req.log.error({ err }, 'credential lookup failed; the admin check decides');
    return false;
  }
}

export function registerAuth(app: FastifyInstance, deps: Deps): void {
  // D267: the outage lines of the requests go through this service's throttle (db-unavailable.ts)
  registerServiceLogger(deps.logger);
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const auth = req.routeOptions.config?.auth;
    if (!auth || 'public' in auth) return;

    const bearer = bearerOf(req);
    if ('admin' in auth) {
      // C1.3: a partner key on any route but the Partner API's is 403 partner_api_key_scope, the admin API's too;
      // only a bearer shaped as a partner key is looked up, and it is not counted as a failed admin login
      if (bearer && isPartnerKeyShape(bearer) && !isAdminToken(deps, bearer) && (await isPartnerKeyOfThisHost(deps, req, bearer))) {
        return reply.code(403).send({ error: 'partner_api_key_scope', detail: 'A partner API key reaches only Partner API routes, not the admin API.' });
      }
      return checkAdmin(deps, req, reply, bearer);
    }
    if (!bearer) return reply.code(401).send({ error: INVALID_TOKEN });

    let principal: Principal | null;
    try {
      principal = await resolveBearer(deps, bearer);
    } catch (err) {
      // D267: the database away is an outage, one warn line a minute with a count (no stack: it says nothing more);
      // anything else is a bug, an error line of its own with its stack
      const down = databaseUnavailableError(err);
      if (down) logDatabaseUnavailable(req, 'auth.credential_lookup_unavailable', down, 'credential lookup failed, the database is unavailable; answered 503');
      else req.log.error({ err }, 'credential lookup failed');
      // D155: a 503 tells the client when to try again, as the database-unavailable answer of the routes does
      return reply
        .code(503)
        .header('retry-after', String(DB_RETRY_AFTER_SECONDS))
        .send({ error: 'Authentication is temporarily unavailable, try again shortly' });
    }
    if (!principal) {
      // Sandbox and production never share a database, so a key of the other host is simply unknown here;
      // its prefix still tells the caller why (spec §5: wrong host → 401 with detail).
      const detail = wrongHostDetail(bearer, deps.config.APP_ENV);
      return reply.code(401).send(detail ? { error: INVALID_TOKEN, detail } : { error: INVALID_TOKEN });
    }

    if (principal.kind === 'partner') {
      // spec §5: a key works only on the host of its environment; the record decides, not the prefix (C1.3).
      if (principal.environment !== deps.config.APP_ENV) {
        const other = principal.environment === 'sandbox' ? 'sandbox' : 'production';
        return reply.code(401).send({
          error: INVALID_TOKEN,
          detail: `This is a ${other} partner API key; it works only on the ${other} host, and this is the ${deps.config.APP_ENV} host.`,
        });
      }
      if (!auth.accepts.includes('partner')) {
        // C1.3: a scoped route → Insufficient scope; any other existing route → partner_api_key_scope.
        if (auth.scope) {
          return reply.code(403).send({
            error: 'Insufficient scope',
            required_scope: auth.scope,
            detail: `A partner API key reaches only Partner API routes; this route needs ${auth.scope}.`,
          });
        }
        return reply.code(403).send({
          error: 'partner_api_key_scope',
          detail: 'A partner API key reaches only Partner API routes.',
        });
      }
      req.principal = principal;
      return;
    }

    if (!auth.accepts.includes(principal.kind)) {
      // C1.2: the right credential for this route is named in detail.
      return reply.code(401).send({
        error: INVALID_TOKEN,
        detail: `This route takes ${describeAccepted(auth.accepts)}; a ${principal.kind === 'cpo' ? 'CPO access token' : 'personal API token'} is not accepted here.`,
      });
    }
    if (auth.scope && !principal.scopes.includes(auth.scope)) {
      return reply.code(403).send({
        error: 'Insufficient scope',
        required_scope: auth.scope,
        detail: `This token lacks the scope ${auth.scope}.`,
      });
    }
    req.principal = principal;
  });
}
