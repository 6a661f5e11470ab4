// Sandbox helpers of the onboarding area (C2.6): sign a pending machtiging as the customer would, and run the
// EAN re-check now. A sandbox partner key or a CPO token; a caller reaches only its own records. On
// production every /sandbox path is 404 (app.ts).
import { signMandateAsCustomer } from '../../domain/mandates/index.ts';
import { recheckUnverifiedEans } from '../../domain/ean/index.ts';
import type { Principal } from '../../domain/credentials/tokens.ts';
import type { RouteRegistrar } from '../types.ts';
import { z } from 'zod';
import { RecheckResponse, SandboxSignBody, SandboxSignResponse } from '../../../schemas/http/mandates.ts';
import { ErrorBody, errorOf } from '../../../schemas/http/onboarding-common.ts';

const partnerOf = (p: Principal | undefined): string => {
  if (!p || p.kind === 'personal') throw new Error('sandbox helper without a partner credential');
  return p.partnerId;
};

export const sandboxOnboardingRoutes: RouteRegistrar = (app, deps) => {
  app.post(
    '/sandbox/connections/:connection_id/sign-mandate',
    {
      // D126: a CPO token needs the scope that writes accounts (a partner key is the partner's whole sandbox)
      config: { auth: { accepts: ['cpo', 'partner'], scope: 'cpo:accounts:write' } },
      schema: {
        tags: ['Sandbox helpers'],
        summary: 'Sign the pending machtiging of a connection as the customer would (sandbox only)',
        params: z.object({ connection_id: z.string() }),
        body: SandboxSignBody,
        response: {
          200: SandboxSignResponse,
          404: errorOf('connection_not_found'),
          409: errorOf('connection_not_active', 'mandate_already_active'),
          400: errorOf('invalid_request'),
          401: ErrorBody,
          403: ErrorBody,
          429: ErrorBody,
        },
      },
    },
    async (req) =>
      signMandateAsCustomer(deps, req.params.connection_id, {
        partnerId: partnerOf(req.principal),
        fullName: req.body?.full_name ?? null,
        ip: req.ip,
        userAgent: req.headers['user-agent'] ?? null,
      }),
  );

  app.post(
    '/sandbox/ean-recheck',
    {
      config: { auth: { accepts: ['cpo', 'partner'], scope: 'cpo:accounts:write' } },
      schema: {
        tags: ['Sandbox helpers'],
        summary: "Run the periodic EAN re-check now over the caller's unverified connections (sandbox only)",
        body: z.object({}).loose().nullish(),
        response: { 200: RecheckResponse, 400: errorOf('invalid_request'), 401: ErrorBody, 403: ErrorBody, 429: ErrorBody },
      },
    },
    async (req) => ({ ok: true, ...(await recheckUnverifiedEans(deps, { partnerId: partnerOf(req.principal) })) }),
  );
};
