// GET /docs: the API reference, rendered by Scalar from the OpenAPI document (also at /docs/openapi.json), with "try it" for every credential:
// the CPO client-credentials flow sends client_id and client_secret in the form body (the token endpoint
// refuses HTTP Basic, C1.1), partner keys and personal tokens as bearer tokens. Its script is served by the
// app itself (/docs/js/scalar.js, bundled in the package); nothing is loaded from another host: no web fonts,
// no telemetry, no AI agent, no request proxy.
// D233: the reference takes credentials and sends requests with them, so no other site may frame it (clickjacking of
// "try it"): every /docs answer says `frame-ancestors 'none'` (only that directive, so the reference's own scripts and
// styles keep working), `X-Frame-Options: DENY` and `X-Content-Type-Options: nosniff`.
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import apiReference from '@scalar/fastify-api-reference';
import { basePathOf } from './pages/page-kit.ts';

const FRAME_ANCESTORS = "frame-ancestors 'none'";

/**
 * D241: what the outside accessibility audit found on /docs that the reference's own configuration can mend, without
 * touching the bundle. Light mode (the default) with the greys and method colours darkened to 4.5:1 on the page's
 * lightest and its grey backgrounds (#fff, #f6f6f6): the sidebar's GET/POST badges (10 px, #0082d0 and #069061 were
 * below 4:1), the placeholders and the secondary text (#8e8e8e, 3:1). A code block's long lines wrap inside its box
 * (the curl example ran past the right edge of a 375 px phone, its end cut off): wrapped rather than scrolled, as the
 * <pre> cannot take keyboard focus (a scrolling one is axe's scrollable-region-focusable). The selectors outrank the
 * bundle's own `.scalar-app .whitespace-pre` and `.scalar-app :where(code.hljs) *`. Dark mode is left as it is.
 */
export const DOCS_CSS = `body.light-mode {
  --scalar-color-2: #5c5c5c;
  --scalar-color-3: #666666;
  --scalar-color-green: #00794d;
  --scalar-color-blue: #006fb3;
  --scalar-color-orange: #a65200;
  --scalar-color-yellow: #7a6000;
  --scalar-color-red: #c41a18;
}
.scalar-app .scalar-code-block pre { max-width: 100%; }
.scalar-app .scalar-code-block pre, .scalar-app .scalar-code-block pre * { white-space: pre-wrap; overflow-wrap: anywhere; }`;

/** D241: the page's language (English), which the reference's HTML frame leaves out (WCAG 3.1.1) */
const withLang = (html: string): string => html.replace(/<html>/, '<html lang="en">');

/** `publicBaseUrl`: PUBLIC_BASE_URL as it is when a request comes (fixed by the time the service listens) */
export async function registerDocs(app: FastifyInstance, publicBaseUrl: () => string): Promise<void> {
  // D241: the page's route alone gets the hook that sets its language: the plugin passes on only onRequest and
  // preHandler hooks, which never see the page, and a scope of its own around the plugin would leave the reference
  // without the app's hooks added after it (authentication, rate limit, metrics)
  app.addHook('onRoute', (route) => {
    if (route.url !== '/docs/' || ![route.method].flat().includes('GET')) return;
    const addLang: onSendHookHandler = async (_req, _reply, payload) => (typeof payload === 'string' ? withLang(payload) : payload);
    route.onSend = [...[route.onSend ?? []].flat(), addLang];
  });
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
      customCss: DOCS_CSS,
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
