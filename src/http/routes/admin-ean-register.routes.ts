// POST /admin/ean-register (C1.6, C2.7): load entries into the embedded, table-backed EAN register.
import { z } from 'zod';
import { loadRegisterEntries } from '../../domain/ean/index.ts';
import type { RouteRegistrar } from '../types.ts';
import { AdminEanRegisterBody } from '../../../schemas/http/catalog.ts';
import { ErrorBody, errorOf } from '../../../schemas/http/onboarding-common.ts';

export const adminEanRegisterRoutes: RouteRegistrar = (app, deps) => {
  app.post(
    '/admin/ean-register',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary: 'Load EAN register entries (EAN with postal code and house number); a re-loaded EAN is replaced',
        body: AdminEanRegisterBody,
        response: { 201: z.object({ loaded: z.number().int() }), 400: errorOf('invalid_request'), 401: ErrorBody },
      },
    },
    async (req, reply) => reply.code(201).send({ loaded: await loadRegisterEntries(deps.db, req.body.entries) }),
  );
};
