// GET /sessions of the Personal API (spec §2, §4.3; page bounds C6.3; estimates C5.1–C5.2).
import { listSessionItems } from '../../domain/charging/personal-views.ts';
import { ErrorBody } from '../../../schemas/http/personal-chargers.ts';
import { SessionList, SessionsQuery } from '../../../schemas/http/sessions.ts';
import { principalOf } from '../auth.ts';
import type { RouteRegistrar } from '../types.ts';

export const sessionsRoutes: RouteRegistrar = (app, deps) => {
  app.get(
    '/sessions',
    {
      config: { auth: { accepts: ['personal'], scope: 'chargers:read' } },
      schema: {
        tags: ['Personal API'],
        summary: 'Your charging sessions, newest first, with indicative ERE figures',
        querystring: SessionsQuery,
        response: { 200: SessionList, 400: ErrorBody, 401: ErrorBody, 403: ErrorBody },
      },
    },
    async (req) => {
      const p = principalOf(req, 'personal');
      const q = req.query;
      return listSessionItems(deps, p.userId, {
        limit: q.limit,
        offset: q.offset,
        charger_id: q.charger_id,
        from: q.from ? new Date(q.from) : undefined,
        to: q.to ? new Date(q.to.length === 10 ? `${q.to}T23:59:59Z` : q.to) : undefined,
      });
    },
  );
};
