// Operations: GET /healthz (process up), GET /readyz (database reachable and every migration applied),
// GET /metrics (prom-client text format). Not rate limited and public: probes and scrapers carry no credential.
import { z } from 'zod';
import { ping } from '../../db/database.ts';
import { pendingMigrations } from '../../db/migrate.ts';
import type { RouteRegistrar } from '../types.ts';

const ErrorBody = z.object({ error: z.string(), detail: z.string().optional() });
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
        summary: 'Readiness: the database answers and every migration is applied',
        response: {
          200: z.object({ status: z.literal('ready'), database: z.enum(['pg', 'pglite']) }),
          503: ErrorBody,
        },
      },
    },
    async (_req, reply) => {
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
        produces: ['text/plain'],
        response: { 200: z.string() },
      },
    },
    async (_req, reply) => {
      reply.type(deps.metrics.contentType);
      return deps.metrics.metrics();
    },
  );
};
