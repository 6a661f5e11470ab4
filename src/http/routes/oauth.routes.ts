// POST /oauth/token: client-credentials tokens for CPO clients (spec §5, C1.1).
import { z } from 'zod';
import { issueClientCredentialsToken } from '../../domain/credentials/tokens.ts';
import { DomainError } from '../../domain/errors.ts';
import { FORM_MEDIA_TYPE, type RouteRegistrar } from '../types.ts';

const TokenResponse = z.object({
  access_token: z.string(),
  token_type: z.literal('Bearer'),
  expires_in: z.number().int(),
  scope: z.string(),
});
const OAuthError = z.object({ error: z.string(), detail: z.string().optional() });

export const oauthRoutes: RouteRegistrar = (app, deps) => {
  app.post(
    '/oauth/token',
    {
      config: { auth: { public: true } },
      schema: {
        tags: ['Authentication'],
        summary: 'Client-credentials token for a CPO client (JSON or form body; HTTP Basic is not accepted)',
        // C1.1: the token endpoint takes JSON or a form
        consumes: ['application/json', FORM_MEDIA_TYPE],
        body: z
          .object({
            grant_type: z.string().optional(),
            client_id: z.string().optional(),
            client_secret: z.string().optional(),
            scope: z.string().optional(),
          })
          .loose()
          // documentation only: the domain checks them, in this order (C1.1: an absent or empty one is 400
          // invalid_request, a grant type other than client_credentials 400 unsupported_grant_type)
          .meta({ required: ['grant_type', 'client_id', 'client_secret'] }),
        response: { 200: TokenResponse, 400: OAuthError, 401: OAuthError, 429: OAuthError.loose() },
      },
    },
    async (req, reply) => {
      // C1.1: HTTP Basic client authentication is refused, even with a valid body.
      if (/^basic\s/i.test(req.headers.authorization ?? '')) {
        throw new DomainError('invalid_client', 'HTTP Basic client authentication is not accepted; send client_id and client_secret in the body.');
      }
      const res = await issueClientCredentialsToken(deps, req.body ?? {});
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      return res;
    },
  );
};
