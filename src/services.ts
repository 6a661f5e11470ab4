// Area services that routes, jobs and the OCPP server share (EAN register, mailer, live registry, ...),
// and the fastify plugins that run before the routes (rate limits, metrics). Each area adds its own line.
import type { Deps, Services } from './deps.ts';
import type { App } from './http/types.ts';
import { metricsPlugin } from './http/plugins/metrics.ts';
import { rateLimitPlugin } from './http/plugins/rate-limit.ts';
import { mailerService } from './domain/invites/mailer.ts';
import { onboardingServices } from './domain/ean/services.ts';

type ServiceFactory = (deps: Deps) => Promise<Services> | Services;

const serviceFactories: ServiceFactory[] = [
  // platform
  // onboarding
  onboardingServices,
  // ocpp
  // partner
  mailerService,
  // energy
];

export async function createServices(deps: Deps): Promise<Services> {
  const out: Services = {};
  for (const f of serviceFactories) Object.assign(out, await f({ ...deps, services: out }));
  return out;
}

export const appPlugins: Array<(app: App, deps: Deps) => Promise<void> | void> = [
  // platform: request metrics (GET /metrics), rate limits per credential (C1.5)
  metricsPlugin,
  rateLimitPlugin,
];
