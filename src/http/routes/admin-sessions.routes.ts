// Operator routes for held energy (C5.5): the sessions whose flagged steps wait for a decision, and the decision.
import { decideSessionReview, listHeldSessions } from '../../domain/charging/review.ts';
import { publishChargerChanges } from '../../domain/charging/charger-changes.ts';
import { ErrorBody } from '../../../schemas/http/personal-chargers.ts';
import { HeldSessionList, HeldSessionsQuery, ReviewedSession, SessionReviewBody, SessionReviewParams } from '../../../schemas/http/session-review.ts';
import type { RouteRegistrar } from '../types.ts';
import { errorOf } from '../../../schemas/http/onboarding-common.ts';

export const adminSessionsRoutes: RouteRegistrar = (app, deps) => {
  app.get(
    '/admin/sessions/held',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary:
          'Sessions with flagged steps that wait for a decision (C5.5), oldest first, with the held energy and the reasons, of every charger or one, a page at a time (limit 1–1000, default 100; offset)',
        querystring: HeldSessionsQuery,
        response: { 200: HeldSessionList, 400: errorOf('invalid_request'), 401: ErrorBody },
      },
    },
    async (req) => listHeldSessions(deps, req.query),
  );

  app.post(
    '/admin/sessions/:session_id/review',
    {
      config: { auth: { admin: true } },
      schema: {
        tags: ['Admin'],
        summary:
          "Accept or reject a held session's flagged steps (C5.5): accepted Wh count from now on, rejected Wh never; the session's kwh changes at once, the monthly energy at the next aggregation run",
        params: SessionReviewParams,
        body: SessionReviewBody,
        response: {
          200: ReviewedSession,
          400: errorOf('invalid_request'),
          401: ErrorBody,
          404: errorOf('session_not_found'),
          409: errorOf('session_not_held'),
        },
      },
    },
    async (req) => {
      const decided = await decideSessionReview(deps, req.params.session_id, req.body.decision);
      publishChargerChanges(deps, [decided.charger_id]); // C7.1: the session's review shows on the streams
      return decided;
    },
  );
};
