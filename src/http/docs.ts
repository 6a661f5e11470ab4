// GET /docs: the API reference, rendered by Scalar from the OpenAPI document (also at /docs/openapi.json), with "try it" for every credential:
// the CPO client-credentials flow sends client_id and client_secret in the form body (the token endpoint
// refuses HTTP Basic, C1.1), partner keys and personal tokens as bearer tokens. Its script is served by the
// app itself (/docs/js/scalar.js, bundled in the package); nothing is loaded from another host: no web fonts,
// no telemetry, no AI agent, no request proxy.
// D233: the reference takes credentials and sends requests with them, so no other site may frame it (clickjacking of
// "try it"): every /docs answer says `frame-ancestors 'none'` (only that directive, so the reference's own scripts and
// styles keep working), `X-Frame-Options: DENY` and `X-Content-Type-Options: nosniff`.
import type { FastifyInstance } from 'fastify';
import apiReference from '@scalar/fastify-api-reference';
import { basePathOf } from './pages/page-kit.ts';

const FRAME_ANCESTORS = "frame-ancestors 'none'";

/** `publicBaseUrl`: PUBLIC_BASE_URL as it is when a request comes (fixed by the time the service listens) */
export async function registerDocs(app: FastifyInstance, publicBaseUrl: () => string): Promise<void> {
  await app.register(apiReference, {
    routePrefix: '/docs',
    logLevel: 'warn',
    hooks: {
      onRequest: async (req, reply) => {
        reply.header('content-security-policy', FRAME_ANCESTORS).header('x-frame-options', 'DENY').header('x-content-type-options', 'nosniff');
        // D212: the plugin's own redirect of /docs to /docs/ is a root path, which behind a proxy at a path (/ere)
        // leaves the service; the page itself loads its script and document by relative URLs
        const base = basePathOf(publicBaseUrl());
        if (base && req.url.split('?')[0] === '/docs') return reply.redirect(`${base}/docs/`, 301);
      },
    },
    configuration: {
      pageTitle: 'ere-gateway API reference',
      withDefaultFonts: false,
      telemetry: false,
      agent: { disabled: true },
      mcp: { disabled: true },
      showDeveloperTools: 'never',
      hideClientButton: false,
      persistAuth: false,
      documentDownloadType: 'json',
      defaultOpenAllTags: false,
      operationTitleSource: 'summary',
      authentication: {
        securitySchemes: {
          cpoToken: { flows: { clientCredentials: { 'x-scalar-credentials-location': 'body' } } },
        },
      },
    } as never,
  });
}
