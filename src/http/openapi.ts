// GET /openapi.json: OpenAPI 3.1 generated from the zod schemas of every route. The security section of
// each operation comes from the route's auth declaration (src/http/auth.ts), so the two cannot drift.
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import type { Deps } from '../deps.ts';
import type { RouteAuth } from './auth.ts';

export const SECURITY_SCHEMES = {
  cpoToken: {
    type: 'oauth2',
    description: 'CPO API: OAuth 2.0 client-credentials access token (one hour), bound to one partner.',
    flows: {
      clientCredentials: {
        tokenUrl: '/oauth/token',
        scopes: {
          'cpo:accounts:write': 'create accounts, correct connections, issue mandate links',
          'cpo:accounts:read': 'list accounts and ERE positions',
          'cpo:chargers:write': 'register chargers',
          'cpo:sessions:write': 'deliver monthly kWh',
        },
      },
    },
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

const errorResponse = (description: string, extra: Record<string, unknown> = {}) => ({
  description,
  type: 'object',
  required: ['error'],
  properties: { error: { type: 'string' }, detail: { type: 'string' }, ...extra },
});

/**
 * The error answers the platform gives on every route of a kind (auth layer, rate limits), added to an operation
 * unless the route documents that status itself.
 */
export function platformResponses(auth: RouteAuth | undefined, rateLimited: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (auth && !('public' in auth)) {
    out['401'] = errorResponse('Missing or invalid API token (the detail names the credential this route takes)');
    if ('accepts' in auth) {
      if (auth.scope || !auth.accepts.includes('partner')) {
        out['403'] = errorResponse(
          auth.scope
            ? `Insufficient scope (required_scope ${auth.scope}); partner_api_key_scope for a partner key`
            : 'partner_api_key_scope: a partner API key reaches only Partner API routes',
          { required_scope: { type: 'string' } },
        );
      }
      out['503'] = errorResponse('Authentication is temporarily unavailable, try again shortly');
    }
  }
  if (rateLimited) {
    out['429'] = errorResponse('Too many requests (Retry-After, RateLimit and RateLimit-Policy headers)', {
      retry_after_seconds: { type: 'integer' },
    });
  }
  return out;
}

export async function registerOpenApi(app: FastifyInstance, deps: Deps): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'ere-gateway',
        version: '1.0.0',
        description:
          'Charging-credit service: CPO API (/v1), Partner API (/partner), Personal API, sandbox helpers, ' +
          'operations and the admin API. OCPP 1.6J / 2.0.1 chargers connect at ws(s)://<host>/ocpp/<identity>.',
      },
      servers: [{ url: deps.config.PUBLIC_BASE_URL }],
      components: {
        securitySchemes: {
          ...SECURITY_SCHEMES,
          // {auth_url} of the specification (C0.4): absolute, so generated clients find it
          cpoToken: {
            ...SECURITY_SCHEMES.cpoToken,
            flows: {
              clientCredentials: {
                ...SECURITY_SCHEMES.cpoToken.flows.clientCredentials,
                tokenUrl: `${deps.config.PUBLIC_BASE_URL}/oauth/token`,
              },
            },
          },
        } as never,
      },
    },
    transform: (arg) => {
      const out = jsonSchemaTransform(arg as never) as { schema: Record<string, unknown>; url: string };
      const auth = (arg.route.config as { auth?: RouteAuth } | undefined)?.auth;
      const security = securityFor(auth);
      const schema = { ...out.schema };
      const rateLimited = (arg.route.config as { rateLimit?: unknown } | undefined)?.rateLimit !== false && !(auth && 'admin' in auth);
      if (schema['response']) schema['response'] = { ...platformResponses(auth, rateLimited), ...(schema['response'] as object) };
      if (security) schema['security'] = security;
      else if (auth && 'public' in auth) schema['security'] = [];
      return { schema, url: out.url };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true }, config: { auth: { public: true } } }, async () => app.swagger());
}
