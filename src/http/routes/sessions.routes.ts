// GET /sessions of the Personal API (spec §2, §4.3; page bounds C6.3; estimates C5.1–C5.2).
import { listSessionItems } from '../../domain/charging/personal-views.ts';
import { ErrorBody } from '../../../schemas/http/personal-chargers.ts';
import { SessionList, SessionsQuery } from '../../../schemas/http/sessions.ts';
import { localMidnightPlusDays } from '../../lib/amsterdam-time.ts';
import { principalOf } from '../auth.ts';
import type { RouteRegistrar } from '../types.ts';

const isDate = (v: string) => v.length === 10;
/** Amsterdam midnight of the date `v` plus `days` */
const dayStart = (v: string, days: number) => localMidnightPlusDays(Number(v.slice(0, 4)), Number(v.slice(5, 7)), Number(v.slice(8, 10)), days);

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
        // D121: a date is a day in Amsterdam, as every calendar period of the service; a date-time is the instant it names
        from: q.from ? (isDate(q.from) ? dayStart(q.from, 0) : new Date(q.from)) : undefined,
        to: q.to && !isDate(q.to) ? new Date(q.to) : undefined,
        before: q.to && isDate(q.to) ? dayStart(q.to, 1) : undefined,
      });
    },
  );
};
