// C1.6 admin API, platform part: partners, partner keys, CPO clients, users, personal tokens, account owners,
// and running a scheduled job now. Enabled only with ADMIN_TOKEN (app.ts 404s every /admin path otherwise).
import { z } from 'zod';
import { CPO_SCOPES, PERSONAL_SCOPES } from '../../domain/credentials/scopes.ts';
import {
  createCpoClient,
  revokeCpoClient,
  createPartner,
  createUser,
  linkAccountOwner,
  mintPartnerApiKey,
  mintPersonalToken,
} from '../../domain/credentials/tokens.ts';
import { DomainError } from '../../domain/errors.ts';
import { listJobs, runJobExclusive } from '../../jobs/scheduler.ts';
import { findJob } from '../../jobs/registry.ts';
import type { RouteRegistrar } from '../types.ts';
import { INT4_MAX } from '../../../schemas/http/common.ts';
import { errorOf } from '../../../schemas/http/onboarding-common.ts';

const Err = z.object({ error: z.string(), detail: z.string().optional() });
const admin = { auth: { admin: true } } as const;
// the codes each route names are what it and the domain function it calls throw (invalid_request and invalid_json
// of a 400 are added to every operation by openapi.ts)
const errors = { 400: errorOf('invalid_request'), 401: Err };
const tags = ['Admin'];
const JobStatus = z.object({
  name: z.string(),
  cron: z.string().nullable(),
  running: z.boolean().describe('a process (this or another) holds the job’s lock now'),
  last_run: z
    .object({
      trigger: z.enum(['schedule', 'admin']),
      started_at: z.string(),
      finished_at: z.string(),
      outcome: z.enum(['ok', 'failed']),
      result: z.unknown().describe('what the run returned (as POST /admin/jobs/:job/run answers it); null when it failed'),
      error: z.string().nullable().describe('the failure’s message, at most 500 characters'),
    })
    .nullable()
    .describe('the last run that took the job’s lock, by any process; null: none recorded'),
  last_ok_at: z.string().nullable().describe('when a run last finished without failing'),
});

export const adminPlatformRoutes: RouteRegistrar = (app, deps) => {
  app.post(
    '/admin/partners',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Create a partner',
        body: z.object({
          name: z.string().trim().min(1).max(200),
          rolling_days: z.number().int().min(1).max(3650).optional(),
          rolling_cap: z.number().int().min(0).max(INT4_MAX).optional(),
        }),
        response: { 201: z.object({ partner_id: z.uuid(), name: z.string() }), ...errors },
      },
    },
    async (req, reply) => reply.code(201).send(await createPartner(deps, req.body)),
  );

  app.post(
    '/admin/partners/:partner_id/api-keys',
    {
      config: admin,
      schema: {
        tags,
        summary: "Mint the partner's API key (shown once; revokes the earlier key)",
        params: z.object({ partner_id: z.uuid() }),
        body: z.object({ legacy_prefix: z.boolean().optional() }).optional(),
        response: { 201: z.object({ api_key: z.string() }), ...errors, 404: errorOf('partner_not_found') },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await mintPartnerApiKey(deps, req.params.partner_id, { legacy_prefix: req.body?.legacy_prefix })),
  );

  app.post(
    '/admin/partners/:partner_id/cpo-clients',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Create a CPO client (client credentials; the secret is shown once)',
        params: z.object({ partner_id: z.uuid() }),
        body: z.object({ scopes: z.array(z.enum(CPO_SCOPES)).optional() }).optional(),
        response: {
          201: z.object({ client_id: z.string(), client_secret: z.string(), scopes: z.array(z.string()) }),
          ...errors,
          404: errorOf('partner_not_found'),
        },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await createCpoClient(deps, req.params.partner_id, { scopes: req.body?.scopes })),
  );

  app.post(
    '/admin/cpo-clients/:client_id/revoke',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Revoke a CPO client and every access token it holds (the token endpoint refuses it from then on)',
        params: z.object({ client_id: z.string().min(1).max(200) }),
        response: { 200: z.object({ client_id: z.string(), revoked_tokens: z.number().int() }), ...errors, 404: errorOf('cpo_client_not_found') },
      },
    },
    async (req) => revokeCpoClient(deps, req.params.client_id),
  );

  app.post(
    '/admin/users',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Create a user (an existing e-mail address returns that user)',
        body: z.object({ email: z.email(), full_name: z.string().trim().min(1).max(200).optional() }),
        response: { 201: z.object({ user_id: z.uuid() }), ...errors },
      },
    },
    async (req, reply) => reply.code(201).send(await createUser(deps, req.body)),
  );

  app.post(
    '/admin/users/:user_id/api-tokens',
    {
      config: admin,
      schema: {
        tags,
        summary: "Mint the user's personal API token (shown once; revokes the earlier token)",
        params: z.object({ user_id: z.uuid() }),
        body: z.object({ scopes: z.array(z.enum(PERSONAL_SCOPES)).min(1) }),
        response: { 201: z.object({ token: z.string() }), ...errors, 404: errorOf('user_not_found') },
      },
    },
    async (req, reply) => reply.code(201).send(await mintPersonalToken(deps, req.params.user_id, req.body.scopes)),
  );

  app.post(
    '/admin/users/:user_id/accounts',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Link an account to its owner (the user then sees it through the Personal API)',
        params: z.object({ user_id: z.uuid() }),
        body: z.object({ account_id: z.uuid() }),
        response: { 200: z.object({ ok: z.literal(true) }), ...errors, 404: errorOf('user_not_found', 'account_not_found') },
      },
    },
    async (req) => linkAccountOwner(deps, req.params.user_id, req.body.account_id),
  );

  app.get(
    '/admin/jobs',
    {
      config: admin,
      schema: {
        tags,
        summary: 'The scheduled jobs: cron (null: on demand only), whether a process runs one now, its last run',
        response: { 200: z.object({ jobs: z.array(JobStatus) }), ...errors },
      },
    },
    async () => ({ jobs: await listJobs(deps) }),
  );

  app.post(
    '/admin/jobs/:job/run',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Run a scheduled job now (ean-recheck, energy-aggregate, rate-limit-cleanup, …)',
        params: z.object({ job: z.string() }),
        response: {
          200: z.object({ ok: z.literal(true), job: z.string(), result: z.unknown() }),
          ...errors,
          404: errorOf('job_not_found'),
          409: errorOf('job_running'),
          500: errorOf('job_failed'),
        },
      },
    },
    async (req) => {
      const job = findJob(req.params.job);
      if (!job) throw new DomainError('job_not_found', `No job ${req.params.job}`);
      let outcome: Awaited<ReturnType<typeof runJobExclusive>>;
      try {
        outcome = await runJobExclusive(deps, job);
      } catch (err) {
        // D249: the operator who ran it is told why, in the words the run's record keeps (GET /admin/jobs); the log
        // line is the scheduler's own for a failed run
        req.log.error({ err, job: job.name, trigger: 'admin' }, 'job failed');
        const why = err instanceof Error ? err.message : String(err);
        throw new DomainError('job_failed', `Job ${job.name} failed (its run is in GET /admin/jobs): ${why.slice(0, 2000)}`);
      }
      if (!outcome.ran) throw new DomainError('job_running', `Job ${job.name} is already running (in this process or another); try again later.`);
      // D142: a run by hand is logged with what it did, as a scheduled one
      req.log.info({ event: 'job.finished', job: job.name, trigger: 'admin', result: outcome.result ?? null }, 'job finished');
      return { ok: true as const, job: job.name, result: outcome.result ?? null };
    },
  );
};
