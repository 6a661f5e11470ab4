// Operations: GET /healthz (process up), GET /readyz (start-up complete, database reachable, every migration applied),
// GET /metrics (prom-client text format). Not rate limited; public except /metrics when METRICS_TOKEN is set.
import { z } from 'zod';
import { ping } from '../../db/database.ts';
import { pendingMigrations } from '../../db/migrate.ts';
import type { RouteRegistrar } from '../types.ts';
import { bearerOf, INVALID_TOKEN } from '../auth.ts';
import { timingSafeEqualStr } from '../../lib/secrets.ts';
import { metricsText } from '../plugins/metrics.ts';
import { ErrorBody } from '../../../schemas/http/common.ts';

const ops = { auth: { public: true }, rateLimit: false } as const;

export const opsRoutes: RouteRegistrar = (app, deps) => {
  app.get(
    '/healthz',
    {
      config: ops,
      schema: {
        tags: ['Operations'],
        summary: 'Liveness: the process is up',
        response: { 200: z.object({ status: z.literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: ops,
      schema: {
        tags: ['Operations'],
        summary: 'Readiness: start-up is complete (migrations, catalog, sandbox seed, demo credentials), the database answers',
        response: {
          200: z.object({ status: z.literal('ready'), database: z.enum(['pg', 'pglite']) }),
          503: ErrorBody.describe('error: not_ready (start-up is not complete, the service is stopping, the database does not answer, or a migration is not applied)'),
        },
      },
    },
    async (_req, reply) => {
      const startup = deps.startup;
      // D120: a stopping process is drained by its load balancer before its sockets close
      if (startup.stopping) return reply.code(503).send({ error: 'not_ready', detail: 'The service is stopping.' });
      if (!startup.complete) {
        return reply.code(503).send({ error: 'not_ready', detail: `Start-up is not complete: ${startup.step}.` });
      }
      if (!(await ping(deps.db))) {
        return reply.code(503).send({ error: 'not_ready', detail: 'The database cannot be reached.' });
      }
      let pending: string[];
      try {
        pending = await pendingMigrations(deps.db);
      } catch {
        return reply.code(503).send({ error: 'not_ready', detail: 'The migration state cannot be read.' });
      }
      if (pending.length) {
        return reply.code(503).send({ error: 'not_ready', detail: `Migrations not applied: ${pending.join(', ')}` });
      }
      return { status: 'ready' as const, database: deps.dbKind };
    },
  );

  app.get(
    '/metrics',
    {
      config: ops,
      schema: {
        tags: ['Operations'],
        summary: 'Prometheus metrics: request durations by route and status, process metrics',
        description: 'With METRICS_TOKEN set, requires `Authorization: Bearer <METRICS_TOKEN>`; open otherwise.',
        // the metrics are text (the Prometheus exposition format); the 401 is the JSON error body
        response: {
          200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: z.string() } } },
          401: ErrorBody.describe(`error: ${INVALID_TOKEN} (METRICS_TOKEN is set and the bearer token is not it)`),
        },
      },
    },
    async (req, reply) => {
      // C1.5: a scraper carries METRICS_TOKEN when it is set
      const token = deps.config.METRICS_TOKEN;
      const bearer = bearerOf(req);
      if (token && !(bearer && timingSafeEqualStr(bearer, token))) {
        return reply.code(401).send({ error: INVALID_TOKEN, detail: 'GET /metrics requires Authorization: Bearer <METRICS_TOKEN>.' });
      }
      reply.type(deps.metrics.contentType);
      return metricsText(deps, req.log);
    },
  );
};
