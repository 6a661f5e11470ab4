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
      components: { securitySchemes: SECURITY_SCHEMES as never },
    },
    transform: (arg) => {
      const out = jsonSchemaTransform(arg as never) as { schema: Record<string, unknown>; url: string };
      const auth = (arg.route.config as { auth?: RouteAuth } | undefined)?.auth;
      const security = securityFor(auth);
      const schema = { ...out.schema };
      if (security) schema['security'] = security;
      else if (auth && 'public' in auth) schema['security'] = [];
      return { schema, url: out.url };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });
  app.get('/openapi.json', { schema: { hide: true }, config: { auth: { public: true } } }, async () => app.swagger());
}
