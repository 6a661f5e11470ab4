import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Deps } from '../deps.ts';

/** The fastify instance with zod types: route files take this. */
export type App = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression<RawServerDefault>,
  RawReplyDefaultExpression<RawServerDefault>,
  FastifyBaseLogger,
  ZodTypeProvider
>;

/** Every routes file exports one of these; src/http/routes/index.ts lists them. */
export type RouteRegistrar = (app: App, deps: Deps) => void | Promise<void>;

/** A route that takes an HTML form names this in its schema's `consumes`; any other route refuses a form (415, D148). */
export const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';
