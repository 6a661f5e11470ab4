// Partner API (spec §4.2): POST /partner/customers and POST /partner/drafts/import.
// The bodies are documented with their full zod schemas but checked in the domain, so the spec's own
// error strings come out (consent_required, "customers must be a non-empty array of { name, email }").
import { principalOf } from '../auth.ts';
import { importDrafts, uploadCustomers } from '../../domain/partners/index.ts';
import { CustomersBody, ImportBody, PartnerError, UploadResponse } from '../../../schemas/http/partner.ts';
import type { RouteRegistrar } from '../types.ts';

const errors = { 400: PartnerError, 401: PartnerError, 403: PartnerError, 413: PartnerError, 429: PartnerError, 500: PartnerError };
/** Documentation only: the domain validates (see above). */
const passThrough = () => (data: unknown) => ({ value: data });

export const partnerRoutes: RouteRegistrar = (app, deps) => {
  app.post(
    '/partner/customers',
    {
      config: { auth: { accepts: ['partner'] } },
      validatorCompiler: passThrough,
      schema: {
        tags: ['Partner API'],
        summary: 'Upload customers as claimable drafts (at most 1,000 rows become drafts per request)',
        description:
          'Every row that does not become a draft is named in `rejected` and counted in `skipped`. Errors: 400 ' +
          '`consent_required` (with `message`), 400 `customers must be a non-empty array of { name, email }`, 403 ' +
          '`No partner is linked to this API key`, 500 `Failed to create drafts`. See docs/partner.md.',
        body: CustomersBody,
        response: { 200: UploadResponse, ...errors },
      },
    },
    async (req) => uploadCustomers(deps, principalOf(req, 'partner').partnerId, req.body),
  );

  app.post(
    '/partner/drafts/import',
    {
      config: { auth: { accepts: ['partner'] } },
      validatorCompiler: passThrough,
      schema: {
        tags: ['Partner API'],
        summary: 'Import draft rows (JSON rows or CSV text); source "api" looks EANs up during the request',
        description:
          'Same validation, dedupe and caps as POST /partner/customers. Without rows and csv nothing is added. ' +
          'CSV drafts get ean_status "pending" and are looked up by the draft-ean-lookup job.',
        body: ImportBody,
        response: { 200: UploadResponse, ...errors },
      },
    },
    async (req) => importDrafts(deps, principalOf(req, 'partner').partnerId, req.body),
  );
};
